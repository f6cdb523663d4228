"""What `pip install jarvis-minecraft` puts on a machine: Jarvis's names only, and every library it imports declared.

The wheel is built from this checkout, offline (no build isolation), as a packager would build it.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import zipfile
from email.parser import Parser
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Declared and used, though never imported by name: BeautifulSoup's parser, which the crawler names as "lxml".
USED_WITHOUT_IMPORT = {"lxml"}
# The repository's folders whose import names changed (jarvis.crawler, jarvis.index, jarvis.eval, jarvis_lab).
OLD_NAMES = {"crawler", "index", "eval", "wikis"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement, maxsplit=1)[0].lower().replace("_", "-")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "--quiet", "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-2000:]
    (path,) = out.glob("jarvis_minecraft-*.whl")
    with zipfile.ZipFile(path) as archive:
        yield archive


def _imports(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_wheel_installs_only_jarvis_names(wheel):
    top = {name.split("/")[0] for name in wheel.namelist() if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"jarvis"}, top
    names = set(wheel.namelist())
    # The stages install under jarvis, with their data; the lab (test wikis, benchmarks) stays out.
    for shipped in ("jarvis/crawler/__init__.py", "jarvis/crawler/data/page_kinds.yaml", "jarvis/index/search.py",
                    "jarvis/index/data/glossary.tsv", "jarvis/eval/runner.py", "jarvis/eval/questions.txt",
                    "jarvis/data/sample_corpus.jsonl", "jarvis/readers/data/jarvis-minilm-qa/jarvis-reader.json"):
        assert shipped in names, shipped
    assert not [name for name in names if "samplewiki" in name or "realbed/templates" in name or "/bench/" in name]


def test_the_declared_dependencies_are_what_the_code_imports(wheel):
    metadata = Parser().parsestr(wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")))
                                 .decode("utf-8"))
    requires = metadata.get_all("Requires-Dist") or []
    product = {_name(r) for r in requires if "extra ==" not in r or re.search(r"extra == .(models|train).", r)}
    product.discard("jarvis-minecraft")
    imported = set()
    for name in wheel.namelist():
        if name.endswith(".py"):
            imported |= _imports(wheel.read(name).decode("utf-8"))
    imported -= set(sys.stdlib_module_names) | {"jarvis"}
    assert "jarvis_lab" not in imported or _lab_only_in_functions(wheel)
    imported.discard("jarvis_lab")
    distributions = packages_distributions()
    providers = {}
    for module in sorted(imported):
        assert module in distributions, f"{module} is imported but no installed distribution provides it"
        providers[module] = {d.lower().replace("_", "-") for d in distributions[module]}
    undeclared = {module: dists for module, dists in providers.items() if not dists & product}
    assert not undeclared, f"imported but not declared: {undeclared}"
    unused = product - set().union(*providers.values()) - USED_WITHOUT_IMPORT
    assert not unused, f"declared but never imported: {unused}"


def _lab_only_in_functions(wheel) -> bool:
    """The product imports the lab only inside the lab commands (never when a module loads)."""
    for name in wheel.namelist():
        if name.endswith(".py"):
            tree = ast.parse(wheel.read(name).decode("utf-8"))
            for node in tree.body:
                if isinstance(node, (ast.Import, ast.ImportFrom)) and "jarvis_lab" in _imports(ast.unparse(node)):
                    return False
    return True


def test_no_code_imports_the_old_top_level_names():
    """crawler/, index/, eval/ import as jarvis.crawler, jarvis.index, jarvis.eval and wikis/ as jarvis_lab: an
    import by the folder's name would load a second copy of the module (or nothing, in an installed product)."""
    offenders = []
    for folder in ("jarvis", "crawler", "index", "eval", "wikis", "bench", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if "node_modules" in path.parts:
                continue
            found = _imports(path.read_text(encoding="utf-8")) & OLD_NAMES
            offenders += [f"{path.relative_to(ROOT)}: {name}" for name in sorted(found)]
    assert not offenders


def test_the_stages_import_nothing_of_the_core():
    """jarvis.crawler and jarvis.index stand alone: jarvis/__init__.py imports nothing, and they import no
    jarvis module but their own."""
    assert _imports((ROOT / "jarvis" / "__init__.py").read_text(encoding="utf-8")) == set()
    for folder, own in (("crawler", "jarvis.crawler"), ("index", "jarvis.index")):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                           [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
                for module in modules:
                    if module == "jarvis" or module.startswith("jarvis."):
                        allowed = ("jarvis.crawler",) if folder == "crawler" else ("jarvis.crawler", "jarvis.index")
                        assert module.startswith(allowed), f"{path.relative_to(ROOT)} imports {module}"


def test_the_benchmarks_are_a_library_of_the_lab():
    """bench/ (jarvis_lab.bench) imports Jarvis and the lab as installed: no sys.path edits, nothing from tests/,
    and no percentile of its own (jarvis.percentiles is the one, for the eval report and `jarvis report` too)."""
    test_modules = {path.stem for path in (ROOT / "tests").glob("*.py")}
    for path in sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "wikis").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"sys\.path\.(insert|append|extend)|sys\.path\s*[+]?=", text), path
        assert not _imports(text) & test_modules, path
    defined = [f"{path.relative_to(ROOT)}: {node.name}"
               for folder in ("jarvis", "crawler", "index", "eval", "bench", "wikis")
               for path in (ROOT / folder).rglob("*.py") if "node_modules" not in path.parts
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and "percentile" in node.name]
    assert defined == ["jarvis/percentiles.py: percentile"]
