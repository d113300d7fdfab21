"""``dynagrad.special``: PyTorch's ``torch.special`` namespace.

Most names are the functions dynagrad already has under their top-level names
(``special.expit`` is ``sigmoid``, ``special.gammaln`` is ``lgamma``); the rest are ops of
``ops/special.py``: with derivatives where PyTorch has them (entr, erfcx, i0e, i1, i1e,
ndtri, log_ndtr, xlog1py, zeta in its second argument), without where it has none (the
Bessel and Airy functions, the orthogonal polynomials: their results do not require
grad). Values come from SciPy's ``scipy.special`` when it is installed, as for erf and
lgamma; without it, NumPy forms compute all but the Bessel and Airy functions, which say
what to install (``pip install 'dynagrad[special]'``).
"""
import math

from .tensor import Tensor
from .ops import special as _ops
from .ops.arithmetic import Mul as _Mul
from . import ops as _top
from .nn.functional import softmax as _softmax, log_softmax as _log_softmax
from .ops.out_args import give_out, EXACT

__all__ = [
    'airy_ai', 'bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'chebyshev_polynomial_t',
    'chebyshev_polynomial_u', 'chebyshev_polynomial_v', 'chebyshev_polynomial_w', 'digamma',
    'entr', 'erf', 'erfc', 'erfcx', 'erfinv', 'exp2', 'expit', 'expm1', 'gammainc',
    'gammaincc', 'gammaln', 'hermite_polynomial_h', 'hermite_polynomial_he', 'i0', 'i0e',
    'i1', 'i1e', 'laguerre_polynomial_l', 'legendre_polynomial_p', 'log1p', 'log_ndtr',
    'log_softmax', 'logit', 'logsumexp', 'modified_bessel_i0', 'modified_bessel_i1',
    'modified_bessel_k0', 'modified_bessel_k1', 'multigammaln', 'ndtr', 'ndtri', 'polygamma',
    'psi', 'round', 'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1',
    'shifted_chebyshev_polynomial_t', 'shifted_chebyshev_polynomial_u',
    'shifted_chebyshev_polynomial_v', 'shifted_chebyshev_polynomial_w', 'sinc', 'softmax',
    'spherical_bessel_j0', 'xlog1py', 'xlogy', 'zeta']

# the names PyTorch keeps here for functions it also has at top level
erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, sinc, xlogy, i0, round = (
    _top.erf, _top.erfc, _top.erfinv, _top.exp2, _top.expm1, _top.log1p, _top.logit,
    _top.logsumexp, _top.sinc, _top.xlogy, _top.i0, _top.round)
digamma = psi = _top.digamma
polygamma = _top.polygamma
gammaln = _top.lgamma
multigammaln = _top.mvlgamma
expit = _top.sigmoid
gammainc = _top.igamma
gammaincc = _top.igammac


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype=dtype)


def _tensor(fn, name, x, position=1, arg='input'):
    if not isinstance(x, Tensor):
        raise TypeError(f"special_{name}(): argument '{arg}' (position {position}) must be "
                        f'Tensor, not {type(x).__name__}')


# PyTorch's CPU kernels of these take no float16 or bfloat16
_NO_HALF = {'erfcx', 'ndtri', 'log_ndtr', 'zeta', 'airy_ai', 'bessel_j0', 'bessel_j1',
            'bessel_y0', 'bessel_y1', 'modified_bessel_i0', 'modified_bessel_i1',
            'modified_bessel_k0', 'modified_bessel_k1', 'scaled_modified_bessel_k0',
            'scaled_modified_bessel_k1', 'spherical_bessel_j0', *_ops.POLYNOMIALS}


def _refuse_half(name, *values):
    for v in values:
        if isinstance(v, Tensor) and str(v.dtype) in ('dynagrad.float16', 'dynagrad.bfloat16'):
            kind = 'Half' if str(v.dtype) == 'dynagrad.float16' else 'BFloat16'
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\' (compute '
                                      'in float32: x.float())')


def _unary(op, name):
    def fn(input):
        _tensor(fn, name, input)
        if name in _NO_HALF:
            _refuse_half(name, input)
        return op.apply(input)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f'``torch.special.{name}``.'
    return fn


entr = _unary(_ops.Entr, 'entr')
erfcx = _unary(_ops.Erfcx, 'erfcx')
i0e = _unary(_ops.I0e, 'i0e')
i1 = _unary(_ops.SpecialI1, 'i1')
i1e = _unary(_ops.I1e, 'i1e')
ndtri = _unary(_ops.Ndtri, 'ndtri')
log_ndtr = _unary(_ops.LogNdtr, 'log_ndtr')


def ndtr(input):
    """The standard normal CDF, ``(1 + erf(x / sqrt 2)) / 2`` (recorded as PyTorch records
    it)."""
    _tensor(ndtr, 'ndtr', input)
    return _Mul.named('MulBackward1').apply(1 + erf(input * (1 / math.sqrt(2))), 0.5)


def _binary(op, name):
    node = op._node_name[:-1]

    def fn(input, other):
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, "
                            f'not {type(input).__name__}')
        # PyTorch names the Scalar overloads' nodes ...Backward1 (self) and ...Backward2
        if name in _NO_HALF:
            _refuse_half(name, input, other)
        variant = (op if isinstance(input, Tensor) and isinstance(other, Tensor) else
                   op.named(node + ('1' if not isinstance(input, Tensor) else '2')))
        return variant.apply(input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f'``torch.special.{name}``.'
    return fn


xlog1py = _binary(_ops.Xlog1py, 'xlog1py')
zeta = _binary(_ops.Zeta, 'zeta')


def _undifferentiated(name):
    def fn(input):
        _tensor(fn, name, input)
        _refuse_half(name, input)
        return _ops.SpecialUnary.apply(input, name=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f'``torch.special.{name}`` (no derivative, as in PyTorch).'
    return fn


for _name in ('bessel_j0', 'bessel_j1', 'bessel_y0', 'bessel_y1', 'modified_bessel_i0',
              'modified_bessel_i1', 'modified_bessel_k0', 'modified_bessel_k1',
              'scaled_modified_bessel_k0', 'scaled_modified_bessel_k1', 'spherical_bessel_j0',
              'airy_ai'):
    globals()[_name] = _undifferentiated(_name)


def _polynomial(name):
    def fn(input, n):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, "
                            f'not {type(input).__name__}')
        _refuse_half(name, input, n)
        if not isinstance(input, Tensor):
            input = _top.full((), input, dtype=n.dtype if n.dtype.is_floating_point else None)
        return _ops.Polynomial.apply(input, n, name=name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f'``torch.special.{name}(input, n)`` (no derivative, as in PyTorch).'
    return fn


for _name in _ops.POLYNOMIALS:
    globals()[_name] = _polynomial(_name)
del _name


# the forms that take out= in PyTorch (see ops/out_args.py)
give_out(globals(), '''
    airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
    chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf
    erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h
    hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p
    log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
    modified_bessel_k1 multigammaln ndtr ndtri polygamma psi scaled_modified_bessel_k0
    scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
    shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0
    xlog1py xlogy zeta''')
give_out(globals(), 'round', EXACT)
del give_out, EXACT
