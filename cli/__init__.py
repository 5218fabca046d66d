"""The ``ledger`` command line: a thin shell over the :mod:`ledger` library."""
