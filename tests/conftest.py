"""Suite-wide isolation: ledger's per-user state (stored checkpoints, workspace anchors) goes to
a throwaway directory, never the real ``~/.local/state/ledger``. Tests that set ``LEDGER_HOME``
keep their state under it (``anchors.state_home``)."""

from __future__ import annotations

import os
import tempfile

os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="ledger-test-state-")
