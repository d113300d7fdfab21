"""``dynagrad.testing``: ``assert_close`` and ``make_tensor``, as ``torch.testing``."""

__all__ = []
