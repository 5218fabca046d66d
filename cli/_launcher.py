#!/usr/bin/env python3
"""The ``ledger`` command, installed as a script (pyproject: ``wheel.shared-scripts``).

Not a ``[project.scripts]`` entry point, on purpose: the wrapper pip and uv generate for those
runs ``import re`` (for a Windows-only ``argv[0]`` fix) before a line of ledger, 4.7 ms of a
~9 ms interpreter start, on every hook call and every interactive command (decision 0014,
``bench/bench_decider.py``). The installer rewrites this first line to the environment's own
interpreter, exactly as it writes an entry point's (wheel spec, "Recommended installer features").
"""

import sys

from cli._entry import main

if __name__ == "__main__":
    sys.exit(main())
