"""Libraries' own test suites on PyTorch and on dynagrad: python -m compat.run (README.md)."""
