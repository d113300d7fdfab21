"""Scalar functions the kernels ``dynagrad.compile`` generates call (``fused.py``).

Each is a compiled function of its own, not an inlined ``overload``: numba inlining
``_math.tanh`` at each of the 100 calls of a 200-op chain took 31 s to compile it (its
IR-level inliner grows with every call site), a call to one compiled function 4 s; LLVM
still inlines the call into the loop, which keeps vectorising (1M-element forward of that
chain: 53 ms against 61 inlined).

The GELU functions are ``native/activation.py``'s per-element formulas, operation for
operation, with its kernels' 'contract' flag (LLVM may fuse a product and a sum: 20% faster
here); where it fuses other pairs than in that kernel, a fused GELU is an ulp from eager's
native one. The tanh form's two constants come from the caller, in the data's dtype.
"""
from numba import njit

from ._math import HALF, ONE, normal_cdf_pdf, tanh as _tanh

_jit = njit(cache=True, nogil=True, error_model='numpy')
# as native/activation.py's GELU kernels: a product and a sum may fuse (FMA)
_jit_contract = njit(cache=True, nogil=True, error_model='numpy', fastmath={'contract'})


@_jit
def tanh(u):
    return _tanh(u)


@_jit_contract
def gelu(v):
    return v * normal_cdf_pdf(v)[0]


@_jit_contract
def gelu_grad(v):
    """d gelu / dv: the factor eager's backward multiplies the gradient by."""
    cdf, pdf = normal_cdf_pdf(v)
    return cdf + v * pdf


@_jit_contract
def gelu_tanh(v, k, cubic):
    return HALF * v * (ONE + _tanh(k * (v + cubic * v * v * v)))


@_jit_contract
def gelu_tanh_grad(v, k, cubic):
    three = cubic + cubic + cubic
    v2 = v * v
    th = _tanh(k * (v + cubic * v2 * v))
    return HALF * (ONE + th) + HALF * v * (ONE - th * th) * k * (ONE + three * v2)


@_jit
def block_sum(values, n):
    """The sum of ``values[:n]`` in float64, as 8 interleaved partial sums (independent
    chains: a single one is bound by each add's latency), then paired up."""
    p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = 0.0
    m = n - n % 8
    for j in range(0, m, 8):
        p0 += values[j]
        p1 += values[j + 1]
        p2 += values[j + 2]
        p3 += values[j + 3]
        p4 += values[j + 4]
        p5 += values[j + 5]
        p6 += values[j + 6]
        p7 += values[j + 7]
    for j in range(m, n):
        p0 += values[j]
    return ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
