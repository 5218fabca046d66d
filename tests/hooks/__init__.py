"""Tests of the hook engine, the executors, the governance policies and the hook CLI."""
