"""Rows for ops/statistics.py: quantiles, covariance, histograms, sorted search."""

OPS = []
