"""The test suite. A package, so that pytest and mypy give each test module the same one name
(``tests.core.test_keys``) and mypy checks every file of it."""
