"""The package layout, which pyproject.toml cannot say with a search: every import name starts with `jarvis`.

The repository keeps one folder per stage at its top (crawler/, index/, eval/); they install as
jarvis.crawler, jarvis.index and jarvis.eval. Everything else in the distribution is jarvis/ and its
subpackages (found, so that a new one needs no line here). Metadata and dependencies: pyproject.toml.
"""
from setuptools import find_packages, setup

STAGES = {"jarvis.crawler": "crawler", "jarvis.index": "index", "jarvis.eval": "eval"}

setup(packages=find_packages(include=["jarvis", "jarvis.*"]) + list(STAGES), package_dir=STAGES)
