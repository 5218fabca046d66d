"""The gates configured in pyproject.toml run as tests, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    result = _run("mypy")  # files, strictness and the pydantic plugin come from pyproject.toml
    assert result.returncode == 0, result.stdout + result.stderr


def test_package_ships_py_typed() -> None:
    assert (ROOT / "ledger" / "py.typed").exists()


def test_layering_contract_holds() -> None:
    # [tool.importlinter] in pyproject.toml: ledger's layers import only downwards, the library
    # never imports the CLI or Typer, and the CLI uses only ledger's public API.
    result = subprocess.run([str(Path(sys.executable).with_name("lint-imports"))], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
