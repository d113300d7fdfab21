"""``dynagrad.backends``: the flags and queries of ``torch.backends``, with a CPU-only
PyTorch's defaults. Setting a flag is accepted and kept (it changes nothing NumPy does:
there is no cuDNN, cuBLAS or oneDNN here); reading it gives back what was set.
"""
from . import cpu, cuda, cudnn, mkldnn, mps  # noqa: F401
from ._flags import set_float32_matmul_precision, get_float32_matmul_precision  # noqa: F401
