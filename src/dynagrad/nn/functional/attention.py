"""Attention: scaled_dot_product_attention."""

__all__ = []
