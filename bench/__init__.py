"""The benchmarks (``jarvis_lab.bench``, part of the lab: lab/pyproject.toml): scripts that print figures, run
from a checkout as ``python bench/NAME.py`` or ``python -m jarvis_lab.bench.NAME``. They import Jarvis as it is
installed (``jarvis``, ``jarvis_lab``), never from tests/, and edit no sys.path.

Shared pieces: ``jarvis.percentiles.percentile`` (the one percentile: linear between the closest ranks),
``soak.py`` (what the two soak benchmarks share), ``local_wiki.py`` (a test wiki served by the CLI) and
``realbed.py`` (the real-wiki test bed's corpus, as the crawler writes it).
"""
