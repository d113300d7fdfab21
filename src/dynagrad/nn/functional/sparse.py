"""Embeddings and one-hot encoding."""

__all__ = []
