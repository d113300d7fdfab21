"""Dropout and its variants."""

__all__ = []
