"""The shape of the code: the longest classes and functions of the product packages, counted on the AST.

    python bench/code_shape.py                        # crawler/, index/ and jarvis/
    python bench/code_shape.py --exclude jarvis/bridge --top 10

A class or function is as long as its lines, from its ``def``/``class`` line (decorators not counted) to
its last line, docstring and comments included; a method counts in its class and on its own, a nested
function in its function and on its own. A table of data (a module-level constant) is neither. Prints the
longest ``--top`` of each and every one over the limits (a class over 300 lines, a function over 80);
exits 1 when there is one.
"""
from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("crawler", "index", "jarvis")
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80


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
        return 1
    print(f"\nnothing over the limits (classes {MAX_CLASS_LINES} lines, functions {MAX_FUNCTION_LINES})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
