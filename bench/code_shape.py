"""The shape of the code: the longest classes and functions of the product packages, counted on the AST, and
two rules of the house: no CLI flag name in a string outside the CLI, no import cycle among the modules.

    python bench/code_shape.py                        # crawler/, index/, eval/ and jarvis/
    python bench/code_shape.py --exclude jarvis/bridge --top 10

A class or function is as long as its lines, from its ``def``/``class`` line (decorators not counted) to
its last line, docstring and comments included; a method counts in its class and on its own, a nested
function in its function and on its own. A table of data (a module-level constant) is neither. Prints the
longest ``--top`` of each and every one over the limits (a class over 300 lines, a function over 80).

A flag name is ``--word`` in any string constant (docstrings included) of a module outside the CLI
(``CLI_MODULES``: jarvis/cli/, and jarvis/demo.py, which runs the CLI as an admin would). An import is any
``import`` of a product module, at the top, inside a function or under ``TYPE_CHECKING``: each is a
dependency of the design. Exits 1 when anything is over a limit, a flag is named, or modules import each
other in a circle. tests/test_code_shape.py holds the product to the same rules.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("crawler", "index", "eval", "jarvis")
IMPORT_NAMES = {"crawler": "jarvis.crawler", "index": "jarvis.index", "eval": "jarvis.eval", "jarvis": "jarvis"}
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80
CLI_MODULES = ("jarvis/cli/", "jarvis/demo.py")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class Definition:
    name: str          # Class, Class.method, function, function.inner
    path: str          # relative to the repository
    line: int
    lines: int
    is_class: bool


def definitions(path: Path, root: Path) -> list[Definition]:
    """Every class and function of a Python file, nested ones included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Definition] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append(Definition(name, str(path.relative_to(root)), child.lineno,
                                        child.end_lineno - child.lineno + 1, isinstance(child, ast.ClassDef)))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def python_files(root: Path, packages: tuple[str, ...], excluded: list[str]) -> list[Path]:
    files = [path for package in packages for path in sorted((root / package).rglob("*.py"))]
    return [path for path in files
            if not any(str(path.relative_to(root)).startswith(prefix.rstrip("/") + "/") for prefix in excluded)
            and "node_modules" not in path.parts]


def module_name(path: Path, root: Path = ROOT) -> str:
    """The import name of a product file: crawler/corpus.py -> jarvis.crawler.corpus, jarvis/cli/__init__.py ->
    jarvis.cli."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([IMPORT_NAMES[parts[0]], *parts[1:]])


def imported(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """The product modules ``path`` imports (any import statement: at the top, in a function, for type checking);
    ``from package import module`` is the module, ``from module import name`` the module."""
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.add(f"{base}.{alias.name}")
                elif base in modules:
                    found.add(base)
    return found - {own}


def import_cycles(files: list[Path], root: Path = ROOT) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected, more than one module)."""
    modules = {module_name(path, root): path for path in files}
    edges = {name: imported(path, set(modules), root) for name, path in modules.items()}
    order, low, on_stack, stack, cycles = {}, {}, set(), [], []
    for start in sorted(edges):
        if start in order:
            continue
        work = [(start, iter(sorted(edges[start])))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in order:
                    order[successor] = low[successor] = len(order)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                elif successor in on_stack:
                    low[node] = min(low[node], order[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def flag_names(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, flag) for every CLI flag name in a string of ``path``; none for the CLI's own modules."""
    relative = str(path.relative_to(root))
    if relative.startswith(CLI_MODULES):
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [(node.lineno, flag) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) for flag in FLAG.findall(node.value)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exclude", action="append", default=[], metavar="DIR",
                        help="a folder to leave out, relative to the repository (repeatable)")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="how many of each to list (default: 5)")
    args = parser.parse_args(argv)
    found = [d for path in python_files(ROOT, PACKAGES, args.exclude) for d in definitions(path, ROOT)]
    classes = sorted((d for d in found if d.is_class), key=lambda d: -d.lines)
    functions = sorted((d for d in found if not d.is_class), key=lambda d: -d.lines)
    over = ([d for d in classes if d.lines > MAX_CLASS_LINES]
            + [d for d in functions if d.lines > MAX_FUNCTION_LINES])
    scope = ", ".join(f"{p}/" for p in PACKAGES) + (f" (without {', '.join(args.exclude)})" if args.exclude else "")
    print(f"{len(classes)} classes and {len(functions)} functions in {scope}")
    for title, rows in (("longest classes", classes), ("longest functions", functions)):
        print(f"\n{title}:")
        for d in rows[:args.top]:
            print(f"  {d.lines:4d}  {d.name}  ({d.path}:{d.line})")
    if over:
        print(f"\nover the limits (classes {MAX_CLASS_LINES} lines, functions {MAX_FUNCTION_LINES}):")
        for d in over:
            print(f"  {d.lines:4d}  {d.name}  ({d.path}:{d.line})")
    else:
        print(f"\nnothing over the limits (classes {MAX_CLASS_LINES} lines, functions {MAX_FUNCTION_LINES})")
    every = python_files(ROOT, PACKAGES, [])
    flags = [(path, line, flag) for path in every for line, flag in flag_names(path)]
    print(f"\nflag names in strings outside the CLI: {len(flags)}")
    for path, line, flag in flags:
        print(f"  {flag}  ({path.relative_to(ROOT)}:{line})")
    cycles = import_cycles(every)
    print(f"import cycles among {len(every)} modules: {len(cycles)}")
    for group in cycles:
        print("  " + " <-> ".join(group))
    return 1 if over or flags or cycles else 0


if __name__ == "__main__":
    sys.exit(main())
