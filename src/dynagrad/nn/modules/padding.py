"""Padding modules: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1d/2d/3d)."""

__all__ = []
