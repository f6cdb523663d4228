"""The house rules a maintainer relies on, walked over every module of the product (crawler/, index/, eval/,
jarvis/): no function over 80 lines and no class over 300, no CLI flag name in a string outside the CLI, and no
import cycle. The counting is bench/code_shape.py's (the same rules, printed)."""
from __future__ import annotations

from jarvis_lab.bench.code_shape import (MAX_CLASS_LINES, MAX_FUNCTION_LINES, PACKAGES, ROOT, definitions,
                                         flag_names, import_cycles, python_files)

# The desk (jarvis/panel/) is being split into blueprints on its own branch (issue 48, create_app 333 lines):
# its sizes are held there. Its flags and imports are held here like every other module's.
SIZES_HELD_ELSEWHERE: list[str] = []   # every product package is held to the sizes (the desk too, since its blueprints)


def test_every_product_package_is_walked():
    files = {str(path.relative_to(ROOT)) for path in python_files(ROOT, PACKAGES, [])}
    assert {"crawler/crawl.py", "index/search.py", "eval/runner.py", "jarvis/pipeline.py",
            "jarvis/panel/app.py"} <= files
    assert not any("node_modules" in name for name in files)


def test_no_function_over_80_lines_and_no_class_over_300():
    found = [d for path in python_files(ROOT, PACKAGES, SIZES_HELD_ELSEWHERE) for d in definitions(path, ROOT)]
    over = [f"{d.path}:{d.line} {d.name} ({d.lines} lines)" for d in found
            if d.lines > (MAX_CLASS_LINES if d.is_class else MAX_FUNCTION_LINES)]
    assert not over, over


def test_no_flag_name_in_a_string_outside_the_cli():
    """Library layers speak in settings and arguments, never in the CLI's flags (jarvis/cli/ words their
    errors with them); docstrings included."""
    named = [f"{path.relative_to(ROOT)}:{line} {flag}" for path in python_files(ROOT, PACKAGES, [])
             for line, flag in flag_names(path)]
    assert not named, named


def test_no_import_cycle_among_the_products_modules():
    """Every import counts (top level, inside a function, for type checking): a circle of modules is a circle
    of the design, whatever Python's import order lets through."""
    assert import_cycles(python_files(ROOT, PACKAGES, [])) == []
