"""Tests of the governance analysis: intents, matchers, paths, shell commands, mutation."""
