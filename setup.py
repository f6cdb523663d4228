"""The package layout, which pyproject.toml cannot say with a search: every import name starts with `jarvis`.

The repository keeps one folder per stage at its top (crawler/, index/, eval/); they install as
jarvis.crawler, jarvis.index and jarvis.eval. Everything else in the distribution is jarvis/ and its
subpackages (found, so that a new one needs no line here). A folder of data inside a package (data/,
templates/, static/, playerbot/) is listed as a package of its own, as setuptools wants it to be (otherwise
it warns, at length, for each), its files chosen by pyproject.toml's package-data. Metadata and dependencies:
pyproject.toml.
"""
from pathlib import Path

from setuptools import find_namespace_packages, find_packages, setup

STAGES = {"jarvis.crawler": "crawler", "jarvis.index": "index", "jarvis.eval": "eval"}
HERE = Path(__file__).resolve().parent
NOT_DATA = ("__pycache__", "node_modules", ".pytest_cache")


def data_folders(package: str, folder: Path) -> list[str]:
    """The folders under a package that Python could import but hold data, not code (no __init__.py)."""
    found = find_namespace_packages(where=str(folder), exclude=[f"*{name}*" for name in NOT_DATA] + list(NOT_DATA))
    return [f"{package}.{name}" for name in found
            if all(part.isidentifier() for part in name.split("."))
            and not (folder / name.replace(".", "/") / "__init__.py").is_file()]


packages = find_packages(include=["jarvis", "jarvis.*"]) + list(STAGES)
packages += data_folders("jarvis", HERE / "jarvis")
for stage, folder in STAGES.items():
    packages += data_folders(stage, HERE / folder)

setup(packages=sorted(set(packages)), package_dir=STAGES)
