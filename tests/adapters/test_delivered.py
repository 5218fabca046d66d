"""The registry's enforcement matrix is what the adapters render (decision 0016: "what the client
could deliver"): for every payload fixture of a tool-gating or blockable event and every
decision, the ``delivered`` a record states is what the rendered answer makes the client do,
read the way the client reads it (tests/adapters/_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger._clients import HookDecision, HookEvent, HookResponse, parse_payload, render_response
from ledger._clients.registry import CLIENTS, DECISIONS, delivery, enforcement
from ledger._hooks.mapping import BLOCKABLE_EVENTS

from ._support import FIXTURE_FILES, asks, blocks, fixture_event, fixture_id, output


def _blocks(event: HookEvent, response: HookResponse) -> bool:
    """As :func:`blocks`, and Cursor's follow-up message at a stop: "keep working, here is why",
    what Claude Code's block of a stop means."""
    if event.client == "cursor" and response.exit_code == 0:
        return blocks(event, response) or "followup_message" in output(response)
    return blocks(event, response)


def _decisions(path: Path) -> tuple[str, ...]:
    """The decisions the engine can reach on a fixture's event: all three on a tool-gating
    event, a deny (or not) on a blockable one, none elsewhere."""
    if path.parent.name not in CLIENTS:
        return ()
    event = parse_payload(path.parent.name, path.read_bytes(), expected_event=fixture_event(path))
    if event.phase == "pre":
        return DECISIONS
    return ("allow", "deny") if event.event in BLOCKABLE_EVENTS else ()


CASES = [(p, d) for p in FIXTURE_FILES for d in _decisions(p)]


@pytest.mark.parametrize(("path", "decided"), CASES, ids=[f"{fixture_id(p)}-{d}" for p, d in CASES])
def test_delivered_is_what_the_rendered_answer_does(path: Path, decided: str) -> None:
    client = path.parent.name
    event = parse_payload(client, path.read_bytes(), expected_event=fixture_event(path))
    if event.phase == "pre":
        decision = HookDecision(
            permission=decided,  # type: ignore[arg-type]
            reason="because",
            block=decided == "deny",
        )
    else:
        decision = HookDecision(reason="because", block=decided == "deny")
    delivered = delivery(client, event.client_event, event.phase, decided)
    assert delivered is not None
    response = render_response(client, event, decision)
    done = "deny" if _blocks(event, response) else "ask" if asks(event, response) else "allow"
    assert delivered["decision"] == done
    assert ("why" in delivered) == (done != decided)


def test_every_client_has_a_whole_matrix() -> None:
    for spec in CLIENTS.values():
        for gate in (spec.gate, *spec.gate_by_event.values()):
            assert set(gate) == set(DECISIONS), spec.name
            assert gate["deny"].decision == "deny", spec.name  # no client lets a deny through


def test_the_matrix_says_which_clients_cannot_ask() -> None:
    cannot = {name for name, spec in CLIENTS.items() if enforcement(spec)["ask"].decision != "ask"}
    assert cannot >= {"codex", "gemini", "cline", "cursor"}
    assert "claude" not in cannot
    assert "copilot" not in cannot
    assert enforcement(CLIENTS["cursor"], "beforeShellExecution")["ask"].decision == "ask"


def test_unknown_clients_get_no_delivery() -> None:
    assert delivery(None, None, "pre", "ask") is None
    assert delivery("vim", "PreToolUse", "pre", "ask") is None
