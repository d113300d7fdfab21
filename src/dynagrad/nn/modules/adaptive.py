"""AdaptiveLogSoftmaxWithLoss."""

__all__ = []
