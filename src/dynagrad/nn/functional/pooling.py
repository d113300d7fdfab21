"""Pooling: max, average, adaptive, LP pooling and max-unpooling."""

__all__ = []
