"""Convolutions: conv1d/2d/3d, transposed convolutions, unfold and fold."""

__all__ = []
