"""Runnable examples: ``python -m dynagrad.examples.tour``."""
