"""Where PyTorch defines its randomized low-rank SVD and PCA (``torch._lowrank``)."""
from .ops.linalg_lowrank import pca_lowrank, svd_lowrank  # noqa: F401

__all__ = ['svd_lowrank', 'pca_lowrank']
