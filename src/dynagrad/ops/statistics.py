"""Statistics, histograms and sorted search: quantiles, covariance, counts, bins."""

__all__ = []
