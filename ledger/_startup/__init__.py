"""Building blocks that keep a new process's start cheap (every hook call is a new process).

- :mod:`ledger._startup.namedtuple`: ``NamedTuple`` classes built without compiling source.
- :mod:`ledger._startup.patterns`: regular expressions compiled on first use.
- :mod:`ledger._startup.search_path`: programs found on ``PATH`` without ``shutil``, and only
  in its absolute folders (never the current folder: for a hook, the agent's workspace).

The lowest layer: it imports nothing of ledger's, and every layer above may use it.
"""
