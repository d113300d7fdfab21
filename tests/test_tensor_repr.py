"""repr/str of whole Tensors (dtype suffix, autograd suffixes, summarisation), compared
with torch's repr of the same values with 'torch.' replaced by 'dynagrad.'."""
import numpy as np
import pytest
import torch

import dynagrad as dg

DTYPES = ('float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool')


@pytest.fixture(autouse=True)
def reset_printoptions():
    torch.set_printoptions(profile='default')
    dg.set_printoptions(profile='default')
    yield
    torch.set_printoptions(profile='default')
    dg.set_printoptions(profile='default')
    torch.set_default_dtype(torch.float32)
    dg.set_default_dtype(dg.float32)


def expected(t):
    return repr(t).replace('torch.', 'dynagrad.')


def check(build):
    """``build(lib)`` makes the same tensor in both libraries; compare repr and str."""
    a, b = build(dg), build(torch)
    assert repr(a) == expected(b)
    assert str(a) == str(b).replace('torch.', 'dynagrad.')


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == 'bool':
        v = rng.integers(0, 2, n).astype(bool)
    elif dtype.startswith('float'):
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3)
    elif dtype == 'uint8':
        v = rng.integers(0, 256, n)
    else:
        v = rng.integers(-100, 100, n)
    return v.reshape(shape).astype(getattr(np, dtype if dtype != 'bool' else 'bool_'))


SHAPES = [(), (1,), (4,), (2, 3), (3, 1, 2), (2, 2, 2, 2), (0,), (2, 0), (0, 3, 1)]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('shape', SHAPES, ids=str)
def test_repr_dtypes_and_dims(dtype, shape):
    a = _values(dtype, shape, seed=len(shape) * 31 + DTYPES.index(dtype))
    check(lambda lib: lib.from_numpy(a.copy()))
    check(lambda lib: lib.tensor(a.tolist(), dtype=getattr(lib, dtype)))


@pytest.mark.parametrize('values', [
    [1.0, 2.0, 3.0], [0.1, 2.5, -3.25], [1e-5, 1.0], [1e10, 1.0], [123456789.0, 0.5],
    [float('nan'), 1.0, float('inf'), -float('inf')], [0.0, -0.0], [1e-12, 1e12], [2.0],
    [[1.5, 2.25], [3.125, -4.0625]], 3.14159, 1e20, -0.0, float('nan'),
], ids=repr)
@pytest.mark.parametrize('dtype', ['float32', 'float64', 'float16'])
def test_repr_float_formats(values, dtype):
    check(lambda lib: lib.tensor(values, dtype=getattr(lib, dtype)))


def test_repr_requires_grad_and_grad_fn():
    check(lambda lib: lib.tensor([1.0, 2.0], requires_grad=True))
    check(lambda lib: lib.tensor(1.5, requires_grad=True))
    check(lambda lib: lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True))
    check(lambda lib: lib.zeros(0, requires_grad=True))
    check(lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2)
    check(lambda lib: lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True) * 2)
    check(lambda lib: lib.tensor([1.0, 2.0], requires_grad=True).detach())


GRAD_FN_CASES = {
    'MulBackward0': lambda x: x * 2,
    'AddBackward0': lambda x: x + 1,
    'SubBackward0': lambda x: x - 1,
    'DivBackward0': lambda x: x / 3,
    'NegBackward0': lambda x: -x,
    'PowBackward0': lambda x: x ** 2,
    'ExpBackward0': lambda x: x.exp(),
    'SumBackward0': lambda x: x.sum(),
    'MeanBackward0': lambda x: x.mean(),
    'CloneBackward0': lambda x: x.clone(),
    'ViewBackward0': lambda x: x.view(4),
    'TBackward0': lambda x: x.t(),
    'UnsqueezeBackward0': lambda x: x.unsqueeze(0),
    'MmBackward0': lambda x: x @ x,
    'SelectBackward0': lambda x: x[0],
    'ToCopyBackward0': lambda x: x.double(),
    'TanhBackward0': lambda x: x.tanh(),
    'ReluBackward0': lambda x: x.relu(),
    'SigmoidBackward0': lambda x: x.sigmoid(),
}


@pytest.mark.parametrize('name', sorted(GRAD_FN_CASES))
def test_repr_grad_fn_names(name):
    def build(lib):
        x = lib.tensor([[1.0, -2.0], [3.0, 4.5]], requires_grad=True)
        return GRAD_FN_CASES[name](x)
    check(build)
    assert f'grad_fn=<{name}>' in repr(build(dg))


def test_repr_no_grad_and_in_place():
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            y = x * 2
        return y
    check(build)

    def inplace(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 1
        y.add_(1)
        return y
    check(inplace)


@pytest.mark.parametrize('shape', [(1001,), (2000,), (40, 40), (3, 500), (500, 3), (11, 11, 11),
                                   (2, 2, 300)], ids=str)
@pytest.mark.parametrize('dtype', ['float32', 'int64', 'bool', 'float64'])
def test_repr_summarises_past_threshold(shape, dtype):
    a = _values(dtype, shape, seed=7)
    check(lambda lib: lib.from_numpy(a.copy()))


def test_repr_summarised_with_grad_fn():
    a = np.arange(2000, dtype=np.float32).reshape(40, 50) / 7
    check(lambda lib: lib.tensor(a, requires_grad=True))
    check(lambda lib: lib.tensor(a, requires_grad=True) * 2)


def test_repr_exactly_at_threshold_is_not_summarised():
    a = np.arange(1000, dtype=np.int64)
    check(lambda lib: lib.from_numpy(a.copy()))
    assert '...' not in repr(dg.from_numpy(a))


def test_repr_non_contiguous_views():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(lambda lib: lib.from_numpy(a.copy()).permute(2, 0, 1))
    check(lambda lib: lib.from_numpy(a.copy())[:, ::2, 1:])
    check(lambda lib: lib.from_numpy(a.copy()).t() if a.ndim == 2 else
          lib.from_numpy(a.copy()).transpose(0, 2))


@pytest.mark.parametrize('opts', [
    {'precision': 2}, {'precision': 8}, {'sci_mode': True}, {'sci_mode': False},
    {'threshold': 5}, {'threshold': 5, 'edgeitems': 1}, {'linewidth': 40}, {'profile': 'short'},
    {'profile': 'full'},
], ids=repr)
def test_repr_respects_printoptions(opts):
    torch.set_printoptions(**opts)
    dg.set_printoptions(**opts)
    a = (np.arange(1, 31, dtype=np.float32) / 7).reshape(5, 6)
    check(lambda lib: lib.from_numpy(a.copy()))
    check(lambda lib: lib.from_numpy(a.copy()).reshape(30))
    check(lambda lib: lib.tensor(a, requires_grad=True) * 1e6)
    check(lambda lib: lib.arange(12).reshape(3, 4))


def test_repr_with_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    dg.set_default_dtype(dg.float64)
    check(lambda lib: lib.tensor([1.5, 2.0]))
    check(lambda lib: lib.tensor([1.5, 2.0], dtype=lib.float32))
    check(lambda lib: lib.tensor([1.0], requires_grad=True) * 2)
    check(lambda lib: lib.tensor([1, 2]))


def test_format_and_print_helpers():
    t = dg.tensor([1.0, 2.0])
    assert f'{t}' == repr(t) == str(t)
    assert '%s' % t == repr(t)
    assert repr([dg.tensor(1), dg.tensor(2.5)]) == expected([torch.tensor(1), torch.tensor(2.5)])
