"""Suite-wide isolation: ledger's per-user state (stored checkpoints, workspace anchors) goes to
a throwaway directory, never the real ``~/.local/state/ledger``. Tests that set ``LEDGER_HOME``
keep their state under it (``anchors.state_home``)."""

from __future__ import annotations

import os
import tempfile

from hypothesis import settings

os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="ledger-test-state-")
# Every hook call of the suite decides in its own process, as it did before the resident
# decider: otherwise each test's ledger home would start a decider of its own. The decider's
# tests (tests/hooks/test_decider.py) switch it on, each with its own socket folder.
os.environ["LEDGER_DECIDER"] = "off"

# Property tests explore new examples on every local run (that is how they find bugs), but CI must
# judge a commit, not a dice roll: `.ci/run` selects the "ci" profile, which derandomizes the
# search (the same examples for the same code) and prints the blob that replays a failure.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("LEDGER_HYPOTHESIS_PROFILE", "default"))
