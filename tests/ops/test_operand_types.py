"""Operands that are not tensors, each compared with torch: NumPy scalars are numbers (weak in
promotion, like Python's), non-numbers (str, None, lists, objects) make the operators return
NotImplemented (so == is False, != True, and <, +, ** raise Python's TypeError) and the
functions raise TypeError; ``x in t``."""
import operator
import re
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
        return type(e), str(e)
    if isinstance(r, (torch.Tensor, dg.Tensor)):
        return 'tensor', str(r.dtype).split('.')[1], tuple(r.shape), r.tolist()
    return 'value', r


def _same(fn):
    t, d = _outcome(lambda: fn(torch)), _outcome(lambda: fn(dg))
    if t[0] in ('tensor', 'value'):
        assert d == t
    else:
        # the same exception type (a subclass of it at least), no NumPy text
        assert isinstance(d[0], type) and issubclass(d[0], t[0]), (t, d)
        assert 'ufunc' not in d[1] and 'numpy.dtypes' not in d[1], d
    return t, d


NUMPY_SCALARS = [np.float64(2.5), np.float32(2.5), np.float16(2.5), np.int64(3), np.int32(3),
                 np.uint8(3), np.bool_(True), np.complex128(1 + 2j)]
BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
          operator.floordiv, operator.mod]


@pytest.mark.parametrize('dtype', ['float32', 'float16', 'int32', 'int64', 'bool'])
@pytest.mark.parametrize('scalar', NUMPY_SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize('op', BINARY, ids=lambda o: o.__name__)
def test_numpy_scalars_are_weak_like_python_numbers(op, scalar, dtype):
    if op in (operator.floordiv, operator.mod) and isinstance(scalar, np.complexfloating):
        pytest.skip('torch refuses complex floor division')
    if dtype == 'float16' and isinstance(scalar, np.complexfloating):
        pytest.skip('complex32 (torch: float16 with a complex number) is not a dynagrad dtype')

    def run(lib, reflected):
        t = lib.tensor([1, 2, 3]).to(getattr(lib, dtype))
        return op(scalar, t) if reflected else op(t, scalar)
    for reflected in (False, True):
        t, d = _outcome(lambda: run(torch, reflected)), _outcome(lambda: run(dg, reflected))
        if t[0] == 'tensor':
            assert d[:3] == t[:3]
            np.testing.assert_allclose(np.array(d[3], dtype=complex), np.array(t[3], dtype=complex),
                                       rtol=2e-3)
        else:
            assert isinstance(d[0], type) and issubclass(d[0], t[0]), (t, d)


@pytest.mark.parametrize('scalar', [np.float64(0.5), np.int64(2), np.bool_(True)],
                         ids=lambda s: type(s).__name__)
def test_numpy_scalars_in_functions_keep_float32(scalar):
    for fn in [lambda L, t: L.add(t, scalar), lambda L, t: L.mul(t, scalar),
               lambda L, t: L.sub(t, scalar, alpha=2), lambda L, t: t.clone().add_(scalar),
               lambda L, t: t.clone().mul_(scalar), lambda L, t: L.where(t > 1, t, scalar),
               lambda L, t: L.where(t > 1, scalar, t), lambda L, t: t.clamp(scalar),
               lambda L, t: t.clamp(max=scalar), lambda L, t: t.clone().clamp_(min=scalar),
               lambda L, t: t < scalar, lambda L, t: t == scalar, lambda L, t: L.pow(t, scalar)]:
        t, d = _same(lambda L: fn(L, L.tensor([0.25, 1.5, 3.0])))
        assert t[0] == 'tensor', t


def test_numpy_scalar_result_gradient():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * np.float64(3.0) + np.float32(1.0)) ** np.int64(2)
    assert y.dtype == dg.float32
    y.sum().backward()
    assert x.grad.dtype == dg.float32
    np.testing.assert_allclose(x.grad.numpy(), [24.0, 42.0])


OTHERS = ['s', None, [1.0, 2.0], (1,), object(), {}]
OPERATORS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
             operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_,
             operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize('other', OTHERS, ids=lambda o: type(o).__name__)
@pytest.mark.parametrize('op', OPERATORS, ids=lambda o: o.__name__)
def test_operators_with_non_numbers_match_torch(op, other):
    for make in (lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]), lambda L: L.tensor([1, 2])):
        for reflected in (False, True):
            t, d = _same(lambda L: op(other, make(L)) if reflected else op(make(L), other))
            if t[0] is TypeError and 'unsupported operand' in t[1]:
                assert d[1] == t[1].replace('Tensor', 'Tensor'), (t, d)
            if op in (operator.eq, operator.ne):
                assert t == d == ('value', op is operator.ne)


@pytest.mark.parametrize('other', ['s', None, [1.0, 2.0]], ids=lambda o: type(o).__name__)
@pytest.mark.parametrize('name', ['add', 'mul', 'sub', 'div', 'eq', 'lt', 'ge', 'where',
                                  'maximum', 'remainder', 'pow'])
def test_functions_with_non_numbers_raise_type_error(name, other):
    def run(L):
        t = L.tensor([1.0, 2.0])
        fn = getattr(L, name)
        return fn(t > 1, t, other) if name == 'where' else fn(t, other)
    t, d = _same(run)
    assert t[0] is TypeError
    assert d[1].startswith(f'{name}()'), d


def test_inplace_operator_with_a_string_is_a_type_error_and_writes_nothing():
    t = dg.tensor([1.0, 2.0])
    with pytest.raises(TypeError):
        t += 's'
    assert t.tolist() == [1.0, 2.0] and t._version == 0


# -- x in t ----------------------------------------------------------------------------------

@pytest.mark.parametrize('element', [
    2, 5, 2.0, 4.5, True, False, 1j, np.int64(2), np.float32(9.0), np.bool_(True),
    'a', None, [1], (1,), np.array(2)], ids=repr)
def test_contains_matches_torch(element):
    _same(lambda L: element in L.tensor([[1, 2], [3, 4]]))
    _same(lambda L: element in L.tensor([[1, 2], [3, 4]])[:, [-1, 0]])


@pytest.mark.parametrize('element', [[1, 2], [9, 9], [4], [[3, 4]], [1, 2, 3], 2],
                         ids=repr)
def test_contains_tensor_element_matches_torch(element):
    t, d = _same(lambda L: L.tensor(element) in L.tensor([[1, 2], [3, 4]]))
    if t[0] not in ('tensor', 'value'):
        assert t[0] is RuntimeError and 'must match the size' in d[1]


def test_contains_refusal_text():
    with pytest.raises(RuntimeError, match=r"only supports Tensor or scalar, but you passed in "
                                           r"a <class 'str'>\."):
        'x' in dg.tensor([1, 2])


# -- float parameters ------------------------------------------------------------------------

@pytest.mark.parametrize('call', [
    lambda L, x: x.logit(L.tensor(0.1)), lambda L, x: x.logit('a'),
    lambda L, x: x.logit(np.float64(0.1)), lambda L, x: L.logit(x, L.ones(2, 2)),
    lambda L, x: x.clone().logit_([0.1]), lambda L, x: x.nan_to_num(L.tensor(1.0)),
    lambda L, x: x.nan_to_num(posinf='a'), lambda L, x: L.nan_to_num(x, neginf=[1]),
    lambda L, x: L.nan_to_num(x, np.float32(3), 7), lambda L, x: x.clone().nan_to_num_(None),
])
def test_float_parameters_match_torch(call):
    def run(L):
        return _outcome(lambda: call(L, L.tensor([0.5, float('nan'), float('inf'), 0.25])))
    t, d = run(torch), run(dg)
    if t[0] == 'tensor':
        assert str(d) == str(t)      # (str: NaN equals NaN)
    else:
        # the position differs between torch's function and method forms; dynagrad's are one
        assert d[0] is t[0] is TypeError
        assert re.sub(r' \(position \d\)', '', d[1]) == re.sub(r' \(position \d\)', '', t[1])


# -- arguments NumPy used to read (and word the refusal of) ----------------------------------

LEAKS = {
    'ragged': lambda L, x: L.tensor([[1, 2], [3]]),
    'ragged_deep': lambda L, x: L.tensor([[[1], [2]], [[1], [2, 3]]]),
    'mixed_depth': lambda L, x: L.tensor([[1, 2], 3]),
    'view_str': lambda L, x: x.view('a'), 'reshape_float': lambda L, x: x.reshape(2.5, 2),
    'zeros_str': lambda L, x: L.zeros('a'), 'ones_float': lambda L, x: L.ones(2.5),
    'ones_negative': lambda L, x: L.ones(-1), 'zeros_tensor_size': lambda L, x: L.zeros(
        L.tensor(2), 3), 'view_tensor_size': lambda L, x: x.view(L.tensor(3), 2),
    'full_str': lambda L, x: L.full((2,), 'a'), 'full_none': lambda L, x: L.full((2,), None),
    'full_numpy': lambda L, x: L.full((2,), np.float64(2.5)),
    'fill_str': lambda L, x: x.clone().fill_('a'), 'fill_list': lambda L, x: x.clone().fill_([1]),
    'fill_numpy': lambda L, x: x.clone().fill_(np.float64(2.5)),
    'fn_fill_str': lambda L, x: L.fill(x, 'a'),
    'where_float_condition': lambda L, x: L.where(x, x, x),
    'where_long_condition': lambda L, x: L.where(x.long(), x, x),
}


@pytest.mark.parametrize('name', list(LEAKS))
def test_argument_errors_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        t, d = _same(lambda L: LEAKS[name](L, L.arange(6.0).reshape(2, 3)))
    if t[0] is ValueError or t[0] is RuntimeError:
        assert d[1] == t[1]


def test_where_uint8_condition_warns_as_torch():
    x = dg.ones(2)
    with pytest.warns(UserWarning, match='where received a uint8 condition tensor'):
        assert dg.where(x.to(dg.uint8), x, -x).tolist() == [1.0, 1.0]


@pytest.mark.parametrize('call', [
    lambda L, x: x.sum(dtype='float'), lambda L, x: x.mean(dtype=3),
    lambda L, x: x.sum(dtype=float), lambda L, x: x.cumsum(0, dtype=int),
    lambda L, x: L.arange('a'), lambda L, x: L.arange(0, 'a'), lambda L, x: L.arange(None),
    lambda L, x: L.arange(L.tensor(3)), lambda L, x: L.arange(np.int64(3)),
])
def test_reduction_dtype_and_arange_arguments_match_torch(call):
    t, d = _same(lambda L: call(L, L.ones(2)))
    if t[0] != 'tensor':
        assert t[0] is d[0] is TypeError


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int64'])
@pytest.mark.parametrize('op', [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne], ids=lambda o: o.__name__)
def test_comparison_with_a_complex_number_matches_torch(op, dtype):
    for scalar in (1j, np.complex128(2 + 0j)):
        for reflected in (False, True):
            def run(L):
                t = L.tensor([1, 2]).to(getattr(L, dtype))
                return op(scalar, t) if reflected else op(t, scalar)
            t, d = _same(run)
            if t[0] is NotImplementedError:
                assert d[1] == t[1]
