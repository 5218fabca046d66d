"""The library stays in rooms of a size one can live in: no module over 1,200 lines, no class
over 400, at most 8 modules at the top of ``ledger/`` (the rest live in the subpackages that name
the layers), and no circle of imports inside a package."""

from __future__ import annotations

import ast
from pathlib import Path

LIBRARY = Path(__file__).resolve().parent.parent / "ledger"
MAX_MODULE_LINES = 1200
MAX_CLASS_LINES = 400
MAX_TOP_LEVEL_MODULES = 8


def _modules() -> list[Path]:
    return sorted(LIBRARY.rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _classes(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        (node.name, (node.end_lineno or node.lineno) - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    ]


def test_the_library_is_found() -> None:
    # The checks below would pass vacuously over an empty or moved tree.
    assert (LIBRARY / "__init__.py").is_file()
    assert len(_modules()) > 50


def test_no_module_is_over_1200_lines() -> None:
    too_big = {
        str(p.relative_to(LIBRARY)): n for p in _modules() if (n := _lines(p)) > MAX_MODULE_LINES
    }
    assert too_big == {}, f"split these along their seams: {too_big}"


def test_no_class_is_over_400_lines() -> None:
    too_big = {
        f"{p.relative_to(LIBRARY)}:{name}": n
        for p in _modules()
        for name, n in _classes(p)
        if n > MAX_CLASS_LINES
    }
    assert too_big == {}, f"give these classes rooms (objects they delegate to): {too_big}"


def test_the_library_has_at_most_8_top_level_modules() -> None:
    top = sorted(p.name for p in LIBRARY.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"fold one into a subpackage: {top}"


def test_the_limits_catch_what_they_are_for(tmp_path: Path) -> None:
    # The measures count what a reader sees: a class's body from its line to its last.
    big = tmp_path / "big.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_CLASS_LINES))
    big.write_text(f"class Big:\n{body}\n", encoding="utf-8")
    assert _classes(big) == [("Big", MAX_CLASS_LINES + 1)]
    assert _lines(big) == MAX_CLASS_LINES + 1


def test_no_package_has_an_import_cycle() -> None:
    # Function-level imports count (a lazy import is still a dependency); annotation-only ones
    # do not, as in the layering contract (pyproject.toml, [tool.importlinter]).
    import grimp  # noqa: PLC0415 -- import-linter's graph builder, a test dependency

    graph = grimp.build_graph("ledger", exclude_type_checking_imports=True)
    cycles = sorted(
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if importer.rpartition(".")[0] == imported.rpartition(".")[0]
        and graph.chain_exists(importer=imported, imported=importer)
    )
    assert cycles == [], f"break these circles with the smallest move: {cycles}"
