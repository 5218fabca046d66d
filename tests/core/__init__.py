"""Tests of the evidence layer: canonical JSON, records, keys, tamper and crash resistance."""
