"""Fold and Unfold (col2im and im2col)."""

__all__ = []
