"""``torch.distributed.algorithms``: ``Join`` (join.py)."""
from .join import Join, Joinable, JoinHook  # noqa: F401

__all__ = ['Join', 'Joinable', 'JoinHook']
