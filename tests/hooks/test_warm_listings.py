"""What a warm process keeps between hook calls answers what a fresh process would.

The protected set's folder listings are kept while the folder's stat is the same (one stat
instead of a listing), and a key decoded from the same PEM bytes is reused. Each test changes
the thing behind the cache and checks that the next call sees it.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger._errors import KeyNotFoundError
from ledger._evidence import keys
from ledger._evidence.keys import SigningKey, load_signing_key, store_private_key
from ledger._governance.analysis import runs_later
from ledger._governance.analysis.runs_later import folder_entries


def _aged(folder: Path) -> None:
    """Stamp ``folder`` as changed long ago (its listing is then kept: not racy)."""
    os.utime(folder, (1_700_000_000, 1_700_000_000))


def test_a_file_added_to_a_kept_listing_is_seen(tmp_path: Path) -> None:
    (tmp_path / "a.pth").write_text("")
    first = folder_entries(str(tmp_path))
    assert first == (("a.pth", False),)
    (tmp_path / "evil.pth").write_text("import os")  # the attack the listing is for
    assert folder_entries(str(tmp_path)) == (("a.pth", False), ("evil.pth", False))


@settings(max_examples=40, deadline=None)
@given(
    names=st.lists(
        st.text("abcdefgh.", min_size=1, max_size=6).filter(lambda n: n not in (".", "..")),
        min_size=1,
        max_size=6,
        unique=True,
    ),
    removed=st.integers(min_value=0, max_value=5),
)
def test_a_kept_listing_is_what_a_new_listing_says(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], removed: int
) -> None:
    folder = tmp_path_factory.mktemp("listed")
    for name in names:
        (folder / name).mkdir() if name.endswith(".") else (folder / name).write_text("")
    folder_entries(str(folder))
    gone = names[removed % len(names)]
    target = folder / gone
    target.rmdir() if target.is_dir() else target.unlink()
    fresh = tuple(sorted((e.name, e.is_dir()) for e in os.scandir(folder)))
    assert folder_entries(str(folder)) == fresh


def test_a_listing_read_in_the_folders_own_clock_tick_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a coarse ``ctime`` (kernels before multigrain timestamps), a file added in the same
    tick as the listing leaves the folder's stat as it was: such a listing is listed again."""
    real = os.stat
    frozen: dict[str, tuple[int, int, int, int]] = {}

    def coarse(path: object, *args: object, **kwargs: object) -> object:
        info = real(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path) != str(tmp_path):
            return info
        stamp = frozen.setdefault(
            "stat", (info.st_ctime_ns, info.st_mtime_ns, info.st_ino, info.st_dev)
        )
        ctime, mtime, ino, dev = stamp
        return SimpleNamespace(st_ctime_ns=ctime, st_mtime_ns=mtime, st_ino=ino, st_dev=dev)

    monkeypatch.setattr(os, "stat", coarse)
    (tmp_path / "a").write_text("")
    assert [n for n, _ in folder_entries(str(tmp_path))] == ["a"]
    (tmp_path / "b").write_text("")  # same tick: the folder's stat does not move
    assert [n for n, _ in folder_entries(str(tmp_path))] == ["a", "b"]


def test_an_old_unchanged_folder_is_not_listed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_text("")
    _aged(tmp_path)
    monkeypatch.setattr(runs_later, "RACY_NS", 0)
    folder_entries(str(tmp_path))
    listed: list[str] = []
    real = os.scandir

    def counted(path: str) -> object:
        listed.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counted)
    assert folder_entries(str(tmp_path)) == (("a", False),)
    assert listed == []
    time.sleep(0.01)
    (tmp_path / "b").write_text("")
    assert folder_entries(str(tmp_path)) == (("a", False), ("b", False))
    assert listed == [str(tmp_path)]


def test_a_rotated_key_file_is_read_as_it_is_now(tmp_path: Path) -> None:
    env = {"LEDGER_HOME": str(tmp_path / "home")}
    key = SigningKey.generate()
    store_private_key(key, env)
    loaded = load_signing_key(key.kid, env)
    assert loaded.kid == key.kid
    assert load_signing_key(key.kid, env) is loaded  # the same bytes: decoded once
    other = SigningKey.generate()
    path = keys.private_key_path(key.kid, env)
    path.write_bytes(other.to_pem())  # the file now holds another key
    assert load_signing_key(key.kid, env).kid == other.kid
    path.write_bytes(b"garbage")
    with pytest.raises(KeyNotFoundError):
        load_signing_key(key.kid, env)
