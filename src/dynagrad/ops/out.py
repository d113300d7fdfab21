"""``out=``: the keyword torch's functions take to write their result into a given tensor.

``install`` wraps, once, the top-level functions of ``OUT_FUNCTIONS`` (those whose torch
counterpart takes ``out=`` and whose dynagrad function has no ``out`` parameter of its own),
so a call without ``out`` pays one frame. The rules are torch's: a result that cannot be cast
to the out tensor's dtype is refused (float into an integer tensor, ...) before anything is
written; an out tensor of another shape is resized (with torch's deprecation warning unless
it is empty); tuple results (``sort``, ``max(dim)``...) take a tuple of out tensors; and
since out= writes are not differentiable, a call where autograd would record through an
input or the out tensor raises.
"""
import functools
import inspect
import warnings

from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor
from .creation import can_cast

# torch's functions taking out= that compute from their inputs (the factories, whose out=
# also picks the dtype, are left to their own signatures)
OUT_FUNCTIONS = frozenset('''
abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax
angle any arccos arcsin arctan arctan2 argmax argmin asin asinh atan atan2 atanh baddbmm
bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm
cat ceil cholesky cholesky_solve clamp clip column_stack concat concatenate conj_physical
copysign cos cosh cross cummax cummin cumprod cumsum deg2rad diag diff digamma div divide
dot dstack eq erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide fmax fmin
fmod frac frexp gather gcd ge ger greater greater_equal gt heaviside hstack hypot i0 igamma
igammac index_select inner inverse isneginf isposinf kron kthvalue lcm ldexp le lerp less
less_equal lgamma log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and
logical_not logical_or logical_xor logit logsumexp lt masked_select matmul matrix_power max
maximum mean median min minimum mm mode msort mul multiply mv mvlgamma nan_to_num nanmean
nanmedian nanquantile nansum narrow_copy ne neg negative nextafter nonzero norm not_equal
outer polygamma pow prod quantile rad2deg reciprocal remainder renorm round row_stack rsqrt
sgn sigmoid sign signbit sin sinc sinh sort sqrt square stack std std_mean sub subtract sum
take take_along_dim tan tanh topk triangular_solve tril triu trunc var var_mean vdot vstack
where xlogy
'''.split())

# torch.linalg's: every function that computes a result takes out=
LINALG_OUT_FUNCTIONS = frozenset('''
matmul norm vector_norm matrix_norm inv det slogdet solve cholesky qr svd svdvals eigh
eigvalsh pinv matrix_power matrix_rank cross multi_dot solve_triangular cholesky_ex inv_ex
solve_ex tensorinv tensorsolve vecdot cond householder_product lu_factor lu_factor_ex lu
lu_solve ldl_factor ldl_factor_ex ldl_solve eig eigvals
'''.split())


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _tensors(v)


def _type_name(dtype):
    return dtype.legacy_name[:-len('Tensor')]


def _check(result, out):
    if not isinstance(out, Tensor):
        raise TypeError(f'out must be a Tensor, not {type(out).__name__}')
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the "
                           f'desired output type {_type_name(out.dtype)}')


def _write(result, out):
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(
                f'An output with one or more elements was resized since it had shape '
                f'{list(out.shape)}, which does not match the required output shape '
                f'{list(result.shape)}. This behavior is deprecated, and in a future PyTorch '
                'release outputs will not be resized unless they have zero elements. You can '
                'explicitly reuse an out tensor t by resizing it, inplace, to zero elements '
                'with t.resize_(0).', UserWarning, stacklevel=4)
        out.resize_(tuple(result.shape))
    out.copy_(result)


def _with_out(fn, name):
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if is_grad_enabled() and any(t.requires_grad for t in _tensors(
                (args, tuple(kwargs.values()), out))):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               'automatic differentiation, but one of the arguments requires '
                               'grad.')
        with no_grad():
            result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, (tuple, list)) or len(out) != len(result):
                raise TypeError(f'{name}(): out must be a tuple of {len(result)} Tensors')
            for r, o in zip(result, out):
                _check(r, o)
            for r, o in zip(result, out):
                _write(r, o)
            return type(result)(*out) if hasattr(result, '_fields') else tuple(out)
        _check(result, out)
        _write(result, out)
        return out
    call.accepts_out = True
    return call


def install(namespaces, names=OUT_FUNCTIONS):
    """Wrap, in each module of ``namespaces``, the functions of ``names`` it binds; one
    wrapper per function, so aliases (``div``/``divide``) stay one object."""
    wrapped = {}
    for module in namespaces:
        for name in names & set(getattr(module, '__all__', ())):
            fn = getattr(module, name, None)
            if not callable(fn) or getattr(fn, 'accepts_out', False):
                continue
            try:
                if 'out' in inspect.signature(fn).parameters:
                    continue
            except (TypeError, ValueError):
                continue
            if id(fn) not in wrapped:
                wrapped[id(fn)] = _with_out(fn, fn.__name__)
            setattr(module, name, wrapped[id(fn)])
