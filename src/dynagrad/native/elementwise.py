"""Scalar functions the kernels ``dynagrad.compile`` generates call (``fused.py``).

Each is a compiled function of its own, not an inlined ``overload``: numba inlining
``_math.tanh`` at each of the 100 calls of a 200-op chain took 31 s to compile it (its
IR-level inliner grows with every call site), a call to one compiled function 4 s; LLVM
still inlines the call into the loop, which keeps vectorising (1M-element forward of that
chain: 53 ms against 61 inlined).

The GELU functions are ``native/activation.py``'s per-element formulas, operation for
operation, without its kernels' 'contract' flag (LLVM may fuse a product and a sum there):
a fused GELU is within an ulp of eager's native one. The tanh form's two constants come
from the caller, in the data's dtype.
"""
from numba import njit

from ._math import HALF, ONE, normal_cdf_pdf, tanh as _tanh

_jit = njit(cache=True, nogil=True, error_model='numpy')


@_jit
def tanh(u):
    return _tanh(u)


@_jit
def gelu(v):
    return v * normal_cdf_pdf(v)[0]


@_jit
def gelu_grad(v):
    """d gelu / dv: the factor eager's backward multiplies the gradient by."""
    cdf, pdf = normal_cdf_pdf(v)
    return cdf + v * pdf


@_jit
def gelu_tanh(v, k, cubic):
    return HALF * v * (ONE + _tanh(k * (v + cubic * v * v * v)))


@_jit
def gelu_tanh_grad(v, k, cubic):
    three = cubic + cubic + cubic
    v2 = v * v
    th = _tanh(k * (v + cubic * v2 * v))
    return HALF * (ONE + th) + HALF * v * (ONE - th * th) * k * (ONE + three * v2)
