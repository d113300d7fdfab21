"""``dynagrad.backends.cpu``: which vector instructions the CPU kernels use."""
import os

# PyTorch's names, best first, and the NumPy CPU features each needs.
_CAPABILITIES = (('AVX512', ('AVX512F', 'AVX512BW', 'AVX512VL', 'AVX512DQ')),
                 ('AVX2', ('AVX2', 'FMA3')),
                 ('VSX', ('VSX',)),
                 ('Z VECTOR', ('VX',)))


def _numpy_cpu_features():
    """NumPy's runtime CPU feature detection (what its own kernels dispatch on)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__
        except ImportError:
            return {}
    return __cpu_features__


def get_cpu_capability():
    """PyTorch's name for the best vector instruction set of this CPU: 'AVX512', 'AVX2',
    'VSX', 'Z VECTOR' or 'DEFAULT', read from NumPy's CPU detection and capped, as in
    PyTorch, by the ``ATEN_CPU_CAPABILITY`` environment variable ('default', 'avx2',
    'avx512'). On ARM it is 'DEFAULT' (PyTorch's 'SVE256' needs the SVE vector length,
    which NumPy does not report)."""
    features = _numpy_cpu_features()
    names = [name for name, needs in _CAPABILITIES if all(features.get(f) for f in needs)]
    best = names[0] if names else 'DEFAULT'
    cap = os.environ.get('ATEN_CPU_CAPABILITY', '').upper()
    order = ('DEFAULT', 'AVX2', 'AVX512')
    if cap in order and best in order and order.index(cap) < order.index(best):
        best = cap
    return best


def set_kernels(mode):
    """dynagrad's own switch: ``'native'`` runs the numba kernels of ``dynagrad.native``
    (GELU, layer norm, softmax...; ``pip install 'dynagrad[fast]'``), ``'numpy'`` the
    NumPy ones, ``'auto'`` (default, or ``DYNAGRAD_KERNELS``) native when numba loads.
    Returns the mode before."""
    from ..backend import set_kernels as set_
    return set_(mode)


def get_kernels():
    from ..backend import get_kernels as get
    return get()


def __getattr__(name):
    # ``dynagrad.backends.cpu.kernels`` reads the mode (setting it goes through set_kernels:
    # a module attribute cannot run code when assigned)
    if name == 'kernels':
        return get_kernels()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
