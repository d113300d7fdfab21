"""Random sampling ops (seeded through dynagrad.manual_seed and dynagrad.Generator)."""

__all__ = []
METHODS = {}
