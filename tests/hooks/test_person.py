"""Who runs a command: :func:`ledger.agent_marker` over the environment and the process chain.

Issue 15 part 2: an approval counts only from a person, and ``isatty`` is not a person. The
decision is a pure function, so its open-ended input (any chain of ancestors, any environment)
is checked with hypothesis.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import agent_marker, ancestor_chain
from ledger._governance import person
from ledger._governance.person import AGENT_ENV_MARKERS, AGENT_PROCESS_NAMES, Ancestor

_BENIGN = ["bash", "zsh", "sh", "fish", "tmux: server", "sshd", "login", "code", "script", "make"]
benign = st.builds(
    Ancestor,
    pid=st.integers(2, 10**6),
    comm=st.sampled_from(_BENIGN),
    argv=st.lists(st.sampled_from(["-l", "/usr/bin/env", "pytest", "-c", "x"]), max_size=3).map(
        tuple
    ),
)
agent_names = st.sampled_from(sorted(AGENT_PROCESS_NAMES))


@given(chain=st.lists(benign, max_size=20))
def test_a_persons_shell_is_not_an_agent(chain: list[Ancestor]) -> None:
    assert agent_marker({"TERM": "xterm", "HOME": "/home/p"}, chain) is None


@given(
    before=st.lists(benign, max_size=8),
    after=st.lists(benign, max_size=8),
    name=agent_names,
    spelled=st.sampled_from(["comm", "argv0", "path", "exe"]),
)
def test_an_agent_anywhere_above_is_found_however_it_is_spelled(
    before: list[Ancestor], after: list[Ancestor], name: str, spelled: str
) -> None:
    # Wrappers between the agent and the command (pty, sh -c, env, nohup) do not hide it.
    agent = {
        "comm": Ancestor(4242, name, (name,)),
        "argv0": Ancestor(4242, "node", (name, "--print")),
        "path": Ancestor(4242, "MainThread", (f"/usr/local/bin/{name}",)),
        "exe": Ancestor(4242, f"{name}.exe", ()),
    }[spelled]
    found = agent_marker({}, [*before, agent, *after])
    assert found is not None
    assert "4242" in found


def test_a_node_client_is_found_by_its_package_path() -> None:
    script = "/usr/lib/node_modules/@google/gemini-cli/dist/index.js"
    assert "Gemini CLI" in (agent_marker({}, [Ancestor(7, "node", ("node", script))]) or "")


@given(name=st.sampled_from(sorted(AGENT_ENV_MARKERS)), value=st.text(min_size=1, max_size=5))
def test_any_client_marker_in_the_environment_is_an_agent(name: str, value: str) -> None:
    assert agent_marker({name: value}, []) is not None


def test_an_empty_marker_is_no_marker() -> None:
    assert agent_marker(dict.fromkeys(AGENT_ENV_MARKERS, ""), []) is None


def test_a_chain_too_deep_to_read_is_not_a_person() -> None:
    chain = [Ancestor(i + 2, "sh", ("sh",)) for i in range(64)]
    assert agent_marker({}, chain) is not None


def test_this_processs_chain_is_read_parent_first() -> None:
    chain = ancestor_chain()
    assert chain, "the test runner has a parent"
    assert chain[0].pid == os.getppid()
    assert all(a.pid > 1 for a in chain)


def test_an_agents_ps_on_path_never_describes_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there is no ``/proc`` the ancestors come from ``ps``: one the agent put first on
    its own ``PATH`` could describe it as a person's shell (and clear its own tripwire)."""
    mark = tmp_path / "ran"
    planted = tmp_path / "ps"
    planted.write_text(f"#!/bin/sh\ntouch {mark}\necho zsh\n", encoding="utf-8")
    planted.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")

    class NoProc(type(Path())):  # type: ignore[misc]
        def is_dir(self) -> bool:
            return str(self) != "/proc" and super().is_dir()

    monkeypatch.setattr(person, "Path", NoProc)
    described = person._ps_text(os.getpid(), "command=")
    assert not mark.exists()
    assert described is not None  # the system's ps described this process
    assert "python" in described
