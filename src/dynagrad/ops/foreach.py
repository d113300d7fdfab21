"""PyTorch's ``torch._foreach_*`` family: one single-tensor op applied over lists of tensors.

Optimizer collections and training libraries call them (``_foreach_mul_(exp_avgs, beta1)``,
``_foreach_addcdiv_(params, exp_avgs, denoms, step_sizes)``, ``_foreach_norm(grads)``).
On the CPU PyTorch runs them as a loop over its single-tensor ops, and so does dynagrad:
every function below is made from one row of ``_FAMILY`` (its overloads, written as
PyTorch's schemas, and the single op it applies), so each element gets exactly the single
op's type promotion, broadcasting, errors and autograd. An out-of-place form returns a
tuple and records the single ops' graphs; an in-place form writes each tensor of ``self``
(the single in-place op, so versions count and in-place history is recorded) and returns
the ``self`` list itself, as PyTorch's do.

Where PyTorch stops half way through a list (the third tensor of an in-place update is
an integer one, or its shape does not broadcast), dynagrad raises first and writes nothing.
"""
import math
import numbers
import warnings

from .. import _dtype
from .._layout import memory_format as _MemoryFormat
from ..autograd import batched
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import arithmetic, unary, clamping, reduction, linalg_products, linalg_norms  # noqa: F401
from .clamping import Maximum, Minimum
from .conversion import _kind
from .strided import _check_inplace_view

_REQUIRED = object()


class _Param:
    __slots__ = ('name', 'type', 'default', 'kwonly', 'index')

    def __init__(self, text, kwonly, index):
        declared, _, default = text.partition('=')
        self.type, self.name = declared.rsplit(' ', 1)
        self.default = _REQUIRED if not default else _DEFAULTS[default]
        self.kwonly = kwonly
        self.index = index


_DEFAULTS = {'1': 1, '2': 2, 'None': None, 'False': False}


class _Overload:
    """One of PyTorch's schemas of a foreach function, e.g.
    ``Tensor[] self, Tensor[] other, *, Scalar alpha=1``."""

    def __init__(self, schema):
        self.params = []
        kwonly = False
        for text in schema.split(', '):
            if text == '*':
                kwonly = True
                continue
            self.params.append(_Param(text, kwonly, len(self.params)))
        self.positional = [p for p in self.params if not p.kwonly]
        self.by_name = {p.name: p for p in self.params}
        self.min_args = sum(p.default is _REQUIRED for p in self.params)
        # the list whose length every other list and scalar list must match
        self.main = next(p for p in self.params if p.type == 'Tensor[]')

    def describe(self):
        shown = []
        for p in self.params:
            if p.kwonly and '*' not in shown:
                shown.append('*')
            text = f'{_TYPE_NAMES[p.type]} {p.name}'
            shown.append(text if p.default is _REQUIRED else f'{text} = {p.default}')
        return '(' + ', '.join(shown) + ')'


# -- what each argument type of a schema accepts (PyTorch's argument parser) --------------

def _is_number(value):
    return isinstance(value, numbers.Number) and not isinstance(value, Tensor)


def _accepts_scalar(value):
    # a 0-dim tensor passes as a Number unless it needs a gradient (which a number drops)
    if isinstance(value, Tensor):
        return value.ndim == 0 and not value.requires_grad
    return _is_number(value)


_ACCEPTS = {
    'Tensor[]': lambda v: isinstance(v, (list, tuple)),
    'Tensor': lambda v: isinstance(v, Tensor),
    'Scalar': _accepts_scalar,
    'Scalar[]': lambda v: isinstance(v, (list, tuple)) and all(_is_number(x) for x in v),
    'bool': lambda v: isinstance(v, bool),
    'ScalarType?': lambda v: v is None or isinstance(v, _dtype.dtype),
    'MemoryFormat?': lambda v: v is None or isinstance(v, _MemoryFormat),
}
_TYPE_NAMES = {'Tensor[]': 'tuple of Tensors', 'Tensor': 'Tensor', 'Scalar': 'Number',
               'Scalar[]': 'tuple of Scalars', 'bool': 'bool', 'ScalarType?': 'dynagrad.dtype',
               'MemoryFormat?': 'dynagrad.memory_format'}


class _Mismatch(Exception):
    """Why arguments do not fit one overload: PyTorch's message for a function of one."""


def _fit(fname, overload, args, kwargs):
    positional = overload.positional
    if len(args) > len(positional):
        n = len(positional)
        raise _Mismatch(f'{fname}() takes {n} positional argument{"s" * (n != 1)} but '
                        f'{len(args)} were given')
    given = {p.name: (value, p.index + 1) for p, value in zip(positional, args)}
    for name, value in kwargs.items():
        if name not in overload.by_name:
            raise _Mismatch(f"{fname}() got an unexpected keyword argument '{name}'")
        if name in given:
            raise _Mismatch(f"{fname}() got multiple values for argument '{name}'")
        given[name] = (value, None)
    bound = {}
    for p in overload.params:
        if p.name not in given:
            if p.default is _REQUIRED:
                raise _Mismatch(f'{fname}() missing 1 required positional arguments: '
                                f'"{p.name}"')
            bound[p.name] = p.default
            continue
        value, position = given[p.name]
        if not _ACCEPTS[p.type](value):
            where = f' (position {position})' if position else ''
            raise _Mismatch(f"{fname}(): argument '{p.name}'{where} must be "
                            f'{_TYPE_NAMES[p.type]}, not {_kind(value)}')
        bound[p.name] = value
    return bound


def _parse(fname, overloads, args, kwargs):
    errors = []
    for overload in overloads:
        try:
            return overload, _fit(fname, overload, args, kwargs)
        except _Mismatch as e:
            errors.append(e)
    # PyTorch's parser explains the one overload whose size fits the call, if only one does
    count = len(args) + len(kwargs)
    plausible = [e for o, e in zip(overloads, errors) if o.min_args <= count <= len(o.params)]
    if len(overloads) == 1 or len(plausible) == 1:
        raise TypeError(str(plausible[0] if plausible else errors[0])) from None
    got = ', '.join([_kind(a) for a in args] + [f'{k}={_kind(v)}' for k, v in kwargs.items()])
    if kwargs and not args:
        got += ', '          # PyTorch's spelling of a keyword-only call
    expected = ''.join(f' * {o.describe()}\n' for o in overloads)
    raise TypeError(f'{fname}() received an invalid combination of arguments - got ({got}), '
                    f'but expected one of:\n{expected}') from None


# -- the checks PyTorch makes on the lists, in its order ------------------------------------

def _check_lists(overload, bound, lists):
    for p in overload.params:
        value = bound[p.name]
        if p.type == 'Tensor[]':
            for i, t in enumerate(value):
                if not isinstance(t, Tensor):
                    raise TypeError(f'expected Tensor as element {i} in argument {p.index}, '
                                    f'but got {_kind(t)}')
    n = len(bound[overload.main.name])
    packed = bound.get('scalars')
    if isinstance(packed, Tensor):     # addcmul/addcdiv: one scalar per tensor, packed
        if packed.ndim != 1:
            raise RuntimeError('Expected packed scalar Tensor to be of dimension 1. Got '
                               f'{packed.ndim} instead.')
        if packed.shape[0] != n:
            raise RuntimeError(f'Expected length of scalars to match input of length {n} '
                               f'but got {packed.shape[0]} instead.')
    others = [bound[p.name] for p in overload.params
              if p.type == 'Tensor[]' and p is not overload.main]
    _LIST_CHECKS[lists](n, [len(o) for o in others])
    for p in overload.params:
        value = bound[p.name]
        if p.type == 'Scalar[]' and len(value) != n:
            raise RuntimeError('Tensor list must have same number of elements as scalar list.')
        if p.type == 'Tensor' and p.name != 'scalars' and value.ndim != 0:
            raise RuntimeError(f'scalar tensor expected to be 0 dim but it has {value.ndim} '
                               f'dimensions and {value.numel()} elements.')


def _same_lengths_then_nonempty(n, others):
    for m in others:
        if m != n:
            raise RuntimeError(f'Tensor lists must have the same number of tensors, got {n} '
                               f'and {m}')
    if n == 0:
        raise RuntimeError('Tensor list must have at least one tensor.')


def _each_nonempty_then_same_lengths(n, others):
    if n == 0 or 0 in others:
        raise RuntimeError('Tensor list must have at least one tensor.')
    _same_lengths_then_nonempty(n, others)


def _mm_lists(n, others):
    if n == 0:
        raise RuntimeError('_foreach_mm requires non-empty tensor lists')
    if others[0] != n:
        raise RuntimeError('_foreach_mm: self and mat2 must have the same number of tensors')


_LIST_CHECKS = {'standard': _same_lengths_then_nonempty,
                'copy': _each_nonempty_then_same_lengths, 'mm': _mm_lists}


def _check_ord(fname, bound):
    ord = bound['ord']
    real = isinstance(ord, (numbers.Real, Tensor))
    if fname == '_foreach_norm' and (isinstance(ord, bool) or not real):
        raise RuntimeError('foreach_tensor_norm_slow expects ord to be integer or float')
    if not real:
        raise RuntimeError('value cannot be converted to type double without overflow')


# -- running the single op over the lists ------------------------------------------------

def _rows(overload, bound, row):
    """The single op's arguments for each element: lists are indexed, the rest repeated."""
    n = len(bound[overload.main.name])
    per_element, fixed = [], {}
    for p in overload.params:
        value = bound[p.name]
        key = row.keywords.get(p.name)
        listed = p.type in ('Tensor[]', 'Scalar[]')
        if p.type == 'Scalar' and isinstance(value, Tensor):
            value = value.item()
        elif p.type == 'Tensor' and row.tensor_as_number:
            value = _as_number_dtype(value)
        elif p.name == 'scalars' and isinstance(value, Tensor):   # packed: one per tensor
            value, listed = value.tolist(), True
        if listed:
            per_element.append((key, value))
        elif key is not None:
            fixed[key] = value
        else:
            per_element.append((None, (value,) * n))
    rows = []
    for i in range(n):
        args, kwargs = [], dict(fixed)
        for key, values in per_element:
            if key is None:
                args.append(values[i])
            else:
                kwargs[key] = values[i]
        rows.append((args, kwargs))
    return rows


def _as_number_dtype(t):
    """``t`` cast (differentiably) to the dtype a Python number of its kind promotes as: a
    0-dim float64 tensor then adds to an integer tensor as a float does (float32)."""
    if t.dtype.is_complex:
        kind = _dtype.default_complex_dtype()
    elif t.dtype.is_floating_point:
        kind = _dtype.get_default_dtype()
    elif t.dtype is _dtype.bool:
        return t
    else:
        kind = _dtype.int64
    return t if t.dtype is kind else t.to(kind)


_EXACT = frozenset((_dtype.float32.numpy, _dtype.float64.numpy))


def _may_fail(args, kwargs):
    """Whether an in-place element could raise in its single op for a reason other than
    its history (a dtype it cannot hold, a kernel its dtype lacks, a shape it cannot take):
    only then is it tried on a copy first."""
    target = args[0]._data
    dtype = target.dtype
    if dtype not in _EXACT:
        return True
    for value in (*args[1:], *kwargs.values()):
        if isinstance(value, Tensor):
            data = value._data
            if data.dtype != dtype or (data.ndim and data.shape != target.shape):
                return True
        elif isinstance(value, complex):
            return True
    return False


def _check_inplace(single_, rows):
    """Raise what an element of an in-place call would raise before any element is written
    (PyTorch writes the elements before the one that fails)."""
    for args, _ in rows:
        _check_inplace_view(args[0])     # a leaf (or its view) that requires grad, inference
    for args, kwargs in rows:
        if _may_fail(args, kwargs):
            # a trial on a copy, whose result is dropped: a compile capture records none of it
            capturing = batched.set_capture(None)
            try:
                with no_grad(), warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    single_(args[0].detach().clone(), *args[1:], **kwargs)
            finally:
                batched.set_capture(capturing)


def _make(fname, overloads, single, row, inplace):
    def foreach(*args, **kwargs):
        overload, bound = _parse(fname, overloads, args, kwargs)
        _check_lists(overload, bound, row.lists)
        if 'ord' in bound:
            _check_ord(fname, bound)
        rows = _rows(overload, bound, row)
        if not inplace:
            return tuple([single(*a, **k) for a, k in rows])
        _check_inplace(single, rows)
        for a, k in rows:
            single(*a, **k)
        return bound['self']
    foreach.__name__ = foreach.__qualname__ = fname
    foreach.__module__ = __name__
    return foreach


# -- the single ops that are not one Tensor method ------------------------------------------

def _tensor_or_clamp(tensor_op, clamp_op):
    """PyTorch's Scalar forms of _foreach_maximum/minimum are clamp_min/clamp_max (maximum
    takes no number)."""
    def single(input, other):
        return (tensor_op if isinstance(other, Tensor) else clamp_op)(input, other)
    return single


_maximum = _tensor_or_clamp(clamping.maximum, clamping.clamp_min)
_maximum_ = _tensor_or_clamp(Maximum.apply_, clamping.clamp_min_)
_minimum = _tensor_or_clamp(clamping.minimum, clamping.clamp_max)
_minimum_ = _tensor_or_clamp(Minimum.apply_, clamping.clamp_max_)


def _max(input):
    if input.numel() == 0:
        raise RuntimeError('_foreach_max cannot compute the maximum of an empty tensor; max '
                           'over zero elements is undefined.')
    return reduction.max(input)


def _norm(input, ord, dtype):
    if ord == math.inf and input.numel() == 0:
        raise RuntimeError('_foreach_norm cannot compute the infinity norm on an empty tensor '
                           'because the operation does not have an identity')
    return linalg_norms.vector_norm(input, ord, dtype=dtype)


def _powsum(input, ord, dtype):
    """The sum of ``|x| ** ord`` (the norm before its root), in ``dtype`` if given."""
    target = dtype if dtype is not None else input.dtype
    if not (target.is_floating_point or target.is_complex):
        name = 'Long' if dtype is None else _dtype.type_name(target)
        raise NotImplementedError(f'"powsum_cpu" not implemented for \'{name}\'')
    x = input if dtype is None else input.to(dtype)
    return arithmetic.pow(unary.abs(x), ord).sum()


def _method(name):
    return getattr(Tensor, name)


# -- the family: PyTorch's schemas and the single op each applies ---------------------------
# The overloads are tried in the order given: a Tensor before a Number (a 0-dim tensor fits
# both), a list of numbers before a list of tensors (an empty list is a scalar list).

_SELF = 'Tensor[] self'
_UNARY = ('abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'erfc', 'exp', 'expm1',
          'floor', 'frac', 'lgamma', 'log', 'log10', 'log1p', 'log2', 'neg', 'reciprocal',
          'round', 'rsqrt', 'sigmoid', 'sign', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'trunc')


def _binary(tensor=None, alpha=False):
    """The forms of add, sub, mul, div, clamp_min/max, maximum/minimum: a number, a list of
    numbers, a list of tensors, and (add, mul, div) one tensor for all."""
    extra = ', *, Scalar alpha=1' if alpha else ''
    forms = [f'{_SELF}, Tensor other{extra}'] if tensor else []
    return tuple(forms + [f'{_SELF}, Scalar[] scalars', f'{_SELF}, Tensor[] other{extra}',
                          f'{_SELF}, Scalar scalar'])


def _pointwise3():
    """addcmul and addcdiv: the multiplier as a list packed in a tensor, a list of numbers,
    or one number."""
    return (f'{_SELF}, Tensor[] tensor1, Tensor[] tensor2, Tensor scalars',
            f'{_SELF}, Tensor[] tensor1, Tensor[] tensor2, Scalar[] scalars',
            f'{_SELF}, Tensor[] tensor1, Tensor[] tensor2, Scalar value=1')


_ALPHA = {'alpha': 'alpha'}
_VALUE = {'value': 'value', 'scalars': 'value'}


class _Row:
    """A foreach function and its in-place form: PyTorch's schemas, the single op applied
    out of place and in place (None where PyTorch has no such form), the foreach parameters
    passed to it as keywords, the order of the list checks, and whether a single Tensor
    operand promotes as the number it holds (``_foreach_add``'s Tensor form does)."""

    def __init__(self, schemas, single, single_, keywords=None, lists='standard',
                 tensor_as_number=False):
        self.schemas, self.single, self.single_ = schemas, single, single_
        self.keywords = keywords or {}
        self.lists, self.tensor_as_number = lists, tensor_as_number


_FAMILY = {
    'add': _Row(_binary(tensor=True, alpha=True), _method('add'), _method('add_'), _ALPHA,
                tensor_as_number=True),
    'sub': _Row(_binary(alpha=True), _method('sub'), _method('sub_'), _ALPHA),
    'mul': _Row(_binary(tensor=True), _method('mul'), _method('mul_')),
    'div': _Row(_binary(tensor=True), _method('div'), _method('div_')),
    'clamp_min': _Row(_binary(), _method('clamp_min'), _method('clamp_min_')),
    'clamp_max': _Row(_binary(), _method('clamp_max'), _method('clamp_max_')),
    'maximum': _Row(_binary(), _maximum, _maximum_),
    'minimum': _Row(_binary(), _minimum, _minimum_),
    'pow': _Row(('Scalar self, Tensor[] exponent', f'{_SELF}, Scalar[] exponent',
                 f'{_SELF}, Tensor[] exponent', f'{_SELF}, Scalar exponent'),
                arithmetic.pow, _method('pow_')),
    'addcmul': _Row(_pointwise3(), _method('addcmul'), _method('addcmul_'), _VALUE),
    'addcdiv': _Row(_pointwise3(), _method('addcdiv'), _method('addcdiv_'), _VALUE),
    'lerp': _Row((f'{_SELF}, Tensor[] tensors1, Scalar[] weight',
                  f'{_SELF}, Tensor[] tensors1, Tensor[] weights',
                  f'{_SELF}, Tensor[] tensors1, Scalar weight'),
                 _method('lerp'), _method('lerp_')),
    'mm': _Row((f'{_SELF}, Tensor[] mat2',), linalg_products.mm, None, lists='mm'),
    'copy_': _Row((f'{_SELF}, Tensor[] src, bool non_blocking=False',), None,
                  _method('copy_'), lists='copy'),
    'zero_': _Row((_SELF,), None, _method('zero_')),
    'clone': _Row((f'{_SELF}, *, MemoryFormat? memory_format=None',), clamping.clone, None,
                  {'memory_format': 'memory_format'}),
    'max': _Row((_SELF,), _max, None),
    'norm': _Row((f'{_SELF}, Scalar ord=2, ScalarType? dtype=None',), _norm, None),
    'powsum': _Row((f'{_SELF}, Scalar ord=2, ScalarType? dtype=None',), _powsum, None),
}
_FAMILY.update({name: _Row((_SELF,), _method(name), _method(name + '_')) for name in _UNARY})


def _build():
    made = {}
    for name, row in _FAMILY.items():
        overloads = [_Overload(s) for s in row.schemas]
        base = '_foreach_' + name.rstrip('_')
        if row.single is not None:
            made[base] = _make(base, overloads, row.single, row, False)
        if row.single_ is not None:
            own = [o for o in overloads if o.params[0] is o.main]   # not pow's Scalar self
            made[base + '_'] = _make(base + '_', own, row.single_, row, True)
    return made


globals().update(_build())
__all__ = sorted(name for name in globals() if name.startswith('_foreach_'))
