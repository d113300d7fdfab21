"""dynagrad.linalg: PyTorch's torch.linalg namespace (the ops live in ops/linalg.py)."""

__all__ = []
