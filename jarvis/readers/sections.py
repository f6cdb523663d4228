"""Where on a wiki page each kind of answer is written: the readers' knowledge of the wiki's layout, as data.

``SECTIONS`` is ``data/sections.yaml`` (its comments say what each table is); the fallback reader
(fallback/kinds.py) and the span reader's passage selector (passages.py) read their tables from it.
"""
from __future__ import annotations

from pathlib import Path

import yaml

SECTIONS_FILE = Path(__file__).resolve().parent / "data" / "sections.yaml"
SECTIONS: dict = yaml.safe_load(SECTIONS_FILE.read_text(encoding="utf-8"))
