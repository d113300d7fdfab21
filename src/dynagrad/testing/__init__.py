"""``dynagrad.testing``: ``assert_close`` and ``make_tensor``, as ``torch.testing``."""
from ._comparison import assert_close, assert_allclose
from ._creation import make_tensor

__all__ = ['assert_close', 'make_tensor', 'assert_allclose']
