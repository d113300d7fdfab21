"""Scalar functions the kernels ``dynagrad.compile`` generates call (``fused.py``).

Each is a compiled function of its own, not an inlined ``overload``: numba inlining
``_math.tanh`` at each of the 100 calls of a 200-op chain took 31 s to compile it (its
IR-level inliner grows with every call site), a call to one compiled function 4 s; LLVM
still inlines the call into the loop, which keeps vectorising (1M-element forward of that
chain: 53 ms against 61 inlined).
"""
from numba import njit

from ._math import tanh as _tanh


@njit(cache=True, nogil=True, error_model='numpy')
def tanh(u):
    return _tanh(u)
