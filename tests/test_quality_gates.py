"""The gates configured in pyproject.toml run as tests, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    # [tool.ruff.format] in pyproject.toml; `ruff format .` fixes what this reports.
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_is_clean_on_library_cli_tests_and_bench() -> None:
    # Files, strictness and the pydantic plugin come from pyproject.toml: ledger/, cli/ and
    # bench/ fully strict; tests/ may leave test functions unannotated, but their bodies are
    # checked all the same (`[[tool.mypy.overrides]]` for `tests.*`).
    trees = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["files"]
    assert {"ledger", "cli", "tests", "bench"} <= set(trees)
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
    # Every file is checked under one module name: none is skipped or shadowed by a clash.
    checked = sum(1 for tree in trees for _ in (ROOT / tree).rglob("*.py"))
    assert f"no issues found in {checked} source files" in result.stdout, result.stdout


def test_package_ships_py_typed() -> None:
    assert (ROOT / "ledger" / "py.typed").exists()


def test_layering_contract_holds() -> None:
    # [tool.importlinter] in pyproject.toml: ledger's layers import only downwards, the library
    # never imports the CLI or Typer, and the CLI uses only ledger's public API.
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports"))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
