"""Tests of the ledger command: the installed entry point and its commands."""
