"""Normalization layers as functions: batch, layer, group, instance, RMS, ..."""

__all__ = []
