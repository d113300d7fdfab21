"""Padding, resampling and pixel rearrangement: pad, interpolate, grid_sample, ..."""

__all__ = []
