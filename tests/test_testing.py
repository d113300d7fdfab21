"""dynagrad.testing against torch.testing: the same inputs, the same outcome and message
(``torch.`` / ``dynagrad.`` aside, and the Tensor class's module path in TypeErrors)."""
import re
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.testing import assert_allclose, assert_close, make_tensor

NAN, INF = float('nan'), float('inf')


class T:
    """A tensor argument, made on each library: ``T(values, dtype)``."""

    def __init__(self, values, dtype='float32', view=None):
        self.values, self.dtype, self.view = np.asarray(values), dtype, view

    def make(self, lib):
        t = lib.tensor(self.values, dtype=getattr(lib, self.dtype))
        return self.view(t) if self.view else t

    def __repr__(self):
        return f'T({self.values.tolist()}, {self.dtype})'


def on(lib, x):
    if isinstance(x, T):
        return x.make(lib)
    if isinstance(x, list):
        return [on(lib, v) for v in x]
    if isinstance(x, tuple):
        return tuple(on(lib, v) for v in x)
    if isinstance(x, dict):
        return {k: on(lib, v) for k, v in x.items()}
    return x


def outcome(fn, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            fn(*args, **kwargs)
    except Exception as e:   # noqa: BLE001 (the outcome is what is compared)
        text = str(e).replace('torch.', 'LIB.').replace('dynagrad.', 'LIB.')
        text = text.replace("LIB.tensor.Tensor'", "LIB.Tensor'")
        return type(e), text
    return None


def same_outcome(fn_torch, fn_dynagrad, a, e, **kwargs):
    expected = outcome(fn_torch, on(torch, a), on(torch, e), **kwargs)
    actual = outcome(fn_dynagrad, on(dynagrad, a), on(dynagrad, e), **kwargs)
    assert actual == expected
    return actual


CASES = [
    # tensors: values, dtypes, shapes
    (T([1., 2, 3]), T([1., 2.5, 3]), {}),
    (T([1., 2, 3]), T([1., 2, 3]), {}),
    (T([1, 2, 3], 'int64'), T([1, 4, 3], 'int64'), {}),
    (T([[1., 2], [3, 4]]), T([[1., 2], [3, 5]]), dict(rtol=0, atol=0.5)),
    (T([1., 2]), T([1., 2, 3]), {}),
    (T([1., 2]), T([1., 2], 'float64'), {}),
    (T([1., 2]), T([1., 2], 'float64'), dict(check_dtype=False)),
    (T([1, 2], 'int64'), T([1., 2.5]), dict(check_dtype=False)),
    (T([1., 2], 'float64'), T([1., 2.1], 'float16'), dict(check_dtype=False)),
    (T([1., 2]), T([1., 2]), dict(rtol=1e-3)),
    (T([1., 2]), T([1., 2]), dict(atol=1e-3)),
    (T([1., 2]), T([1., 3]), dict(rtol=0.1, atol=0)),
    (T([1., 2]), T([1., 2.0001]), dict(rtol=1e-5, atol=1e-6)),
    (T([1, 2], 'int64'), T([1, 4], 'int64'), dict(rtol=0.1, atol=1)),
    (T([1, 2], 'uint8'), T([5, 2], 'uint8'), {}),
    (T([1, 2], 'int32'), T([1, 5], 'int32'), {}),
    (T([True, False], 'bool'), T([True, True], 'bool'), {}),
    (T([1., 2], 'float16'), T([1., 2.01], 'float16'), {}),
    (T([1., 2], 'float16'), T([1., 2.0005], 'float16'), {}),
    (T([1., 2], 'bfloat16'), T([1., 2.1], 'bfloat16'), {}),
    (T([1., 2], 'float64'), T([1., 2 + 1e-8], 'float64'), {}),
    (T([1e10, 1.]), T([1e10 + 1e5, 1.]), {}),
    (T([1000.0012, 0.]), T([1000., 1e-3]), {}),    # only mismatches count for the maxima
    (T([0., 0]), T([0., 1.]), {}),
    (T([5.]), T([0.]), {}),
    (T([[5., 1], [2, 3]]), T([[0., 1], [2, 4]]), {}),
    (T(np.zeros((0, 3))), T(np.zeros((0, 3))), {}),
    # non-finite values
    (T([1., NAN]), T([1., NAN]), {}),
    (T([1., NAN]), T([1., NAN]), dict(equal_nan=True)),
    (T([1., INF]), T([1., INF]), {}),
    (T([1., INF]), T([1., -INF]), {}),
    (T([NAN, 1., 5.]), T([1., 1., 1.]), {}),
    # 0-dim tensors read as scalars
    (T(2.), T(3.), {}),
    (T(2, 'int64'), T(3, 'int64'), {}),
    (T(True, 'bool'), T(False, 'bool'), {}),
    # strides
    (T(np.ones((2, 3))), T(np.ones((3, 2)), view=lambda t: t.t()), dict(check_stride=True)),
    (T(np.ones((2, 3))), T(np.ones((3, 2)), view=lambda t: t.t()), {}),
    # Python scalars
    (1.0, 1.5, {}),
    (1, 2, {}),
    (1, 1, {}),
    (True, False, {}),
    (1.0, 1, {}),
    (1.0, 1, dict(check_dtype=False)),
    (1.0, 1.0 + 1e-8, {}),
    (1.0, 2.0, dict(rtol=0.6, atol=0)),
    (NAN, NAN, {}),
    (NAN, NAN, dict(equal_nan=True)),
    (np.float64(1.0), 1.0, {}),
    (np.int64(3), 4, {}),
    (np.bool_(True), False, {}),
    (None, None, {}),
    (None, 1, {}),
    # NumPy arrays
    (np.array([1., 2]), np.array([1., 3]), {}),
    (np.array([1, 2]), np.array([1, 3]), {}),
    (np.array(1.0), np.array(2.0), {}),
    # containers
    ([T(1.), T(2.)], [T(1.), T(3.)], {}),
    ([1., 2.], [1., 2., 3.], {}),
    ((1, 2), [1, 2], {}),
    ([[T(1.)], [T(2.)]], [[T(1.)], [T(3.)]], {}),
    ({'a': T(1.), 'b': T(2.)}, {'a': T(1.), 'b': T(3.)}, {}),
    ({'a': [1., 2.]}, {'a': [1., 3.]}, {}),
    ({'a': 1}, {'b': 1}, {}),
    ({'a': 1, 'c': 2}, {'b': 1, 'c': 2}, {}),
    # no pair
    (T([1., 2]), 'a', {}),
    ('a', 'b', {}),
    (T([1.]), 1.0, {}),
    (1, T([1]), {}),
    (T([1., 2]), [1., 2.], {}),
    (np.array([1., 2]), T([1., 2], 'float64'), {}),
    # messages replaced
    (T([1., 2]), T([1., 3]), dict(msg='custom')),
    (T([1., 2]), T([1., 3]), dict(msg=lambda m: 'X' + m[:20])),
    ([1., 2.], (1., 3.), dict(msg='m')),
]


@pytest.mark.parametrize('a,e,kwargs', CASES, ids=[f'{i}' for i in range(len(CASES))])
def test_assert_close_matches_torch(a, e, kwargs):
    same_outcome(torch.testing.assert_close, assert_close, a, e, **kwargs)


def test_the_cases_fail_where_they_should():
    """The comparison above is not vacuous: most cases raise, with PyTorch's texts."""
    raised = [outcome(assert_close, on(dynagrad, a), on(dynagrad, e), **k) for a, e, k in CASES]
    assert sum(r is not None for r in raised) > 50
    texts = '\n'.join(r[1] for r in raised if r is not None)
    for piece in ('Tensor-likes are not close!', 'Tensor-likes are not equal!',
                  'Scalars are not close!', 'Mismatched elements: 1 / 3 (33.3%)',
                  'Greatest absolute difference: ', 'Greatest relative difference: ',
                  "The values for attribute 'shape' do not match",
                  'The failure occurred for item [1][0]', 'No comparison pair'):
        assert piece in texts


def test_parameter_subclass():
    p, t = torch.nn.Parameter(torch.ones(2)), torch.ones(2)
    dp, dt = dynagrad.nn.Parameter(dynagrad.ones(2)), dynagrad.ones(2)
    assert outcome(assert_close, dp, dt) is None
    assert outcome(torch.testing.assert_close, p, t) is None
    d_out = outcome(assert_close, dp, dt, allow_subclasses=False)
    t_out = outcome(torch.testing.assert_close, p, t, allow_subclasses=False)
    assert d_out[0] is t_out[0] is TypeError
    assert 'No comparison pair was able to handle inputs of type' in d_out[1]


def test_requires_grad_is_ignored():
    assert_close(dynagrad.ones(2, requires_grad=True), dynagrad.ones(2))


def test_default_tolerances_by_dtype():
    for name, (rtol, atol) in {'float16': (1e-3, 1e-5), 'bfloat16': (1.6e-2, 1e-5),
                               'float32': (1.3e-6, 1e-5), 'float64': (1e-7, 1e-7)}.items():
        e = 100.0
        inside = e + 0.9 * (atol + rtol * e)
        outside = e + 1.5 * (atol + rtol * e)
        dt = getattr(dynagrad, name)
        ok_e = dynagrad.tensor([e], dtype=dt)
        assert outcome(assert_close, dynagrad.tensor([inside], dtype=dt), ok_e) is None or \
            name in ('float16', 'bfloat16')   # the nearest representable value may not fit
        assert outcome(assert_close, dynagrad.tensor([outside], dtype=dt), ok_e) is not None \
            or name in ('float16', 'bfloat16')
        r = outcome(assert_close, dynagrad.tensor([e * 2], dtype=dt), ok_e)
        assert f'(up to {atol} allowed)' in r[1] and f'(up to {rtol} allowed)' in r[1]


# -- assert_allclose (deprecated) ------------------------------------------------------------

ALLCLOSE_CASES = [
    (T([1., 2]), T([1., 2.5]), {}),
    (T([1., 2]), [1., 2.], {}),
    ([1., 2.], [1., 2.5], {}),
    (T([1., 2], 'float16'), T([1., 2.001], 'float16'), {}),
    (T([1., 2], 'float16'), T([1., 2.01], 'float16'), {}),
    (T([1., 2], 'bfloat16'), T([1., 2.5], 'bfloat16'), {}),
    (T([1., 2], 'float64'), T([1., 2.5], 'float64'), {}),
    (T([1, 2], 'int64'), T([1., 2.]), {}),
    (T([1, 2], 'int64'), T([1, 3], 'int64'), {}),
    (T([1, 2], 'int64'), T([1., 2.0000001], 'float64'), {}),
    (T([1., NAN]), T([1., NAN]), {}),
    (T([1., NAN]), T([1., NAN]), dict(equal_nan=False)),
    (T([1., 2]), T([1., 3]), dict(msg='hello')),
    (T([1., 2]), T([1., 2.1]), dict(rtol=0.1)),
    (T([1., 2]), 2., {}),
    (1., 2, {}),
    (T([[1., 2]]), T([1., 2.]), {}),
]


@pytest.mark.parametrize('a,e,kwargs', ALLCLOSE_CASES,
                         ids=[f'{i}' for i in range(len(ALLCLOSE_CASES))])
def test_assert_allclose_matches_torch(a, e, kwargs):
    same_outcome(torch.testing.assert_allclose, assert_allclose, a, e, **kwargs)


def test_assert_allclose_is_deprecated():
    with pytest.warns(FutureWarning, match=r'assert_allclose\(\)` is deprecated') as caught:
        assert_allclose(dynagrad.ones(2), dynagrad.ones(2))
    assert 'Please use `dynagrad.testing.assert_close()` instead' in str(caught[0].message)


# -- make_tensor -----------------------------------------------------------------------------

DTYPES = ['float16', 'bfloat16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64',
          'uint8', 'bool']


@pytest.mark.parametrize('dtype', DTYPES)
def test_make_tensor_default_ranges_match_torch(dtype):
    dynagrad.manual_seed(0)
    torch.manual_seed(0)
    d = make_tensor(4000, dtype=getattr(dynagrad, dtype), device='cpu')
    t = torch.testing.make_tensor(4000, dtype=getattr(torch, dtype), device='cpu')
    assert d.dtype == getattr(dynagrad, dtype) and tuple(d.shape) == (4000,)
    dv, tv = d.float().numpy(), t.float().numpy()
    if dtype in ('bool',) or 'int' in dtype:
        assert set(np.unique(dv)) == set(np.unique(tv))    # every value of the range drawn
    else:
        assert -9 <= dv.min() < -8.5 and 8.5 < dv.max() <= 9
        assert -9 <= tv.min() < -8.5 and 8.5 < tv.max() <= 9


@pytest.mark.parametrize('dtype,low,high', [
    ('int8', -200, 200), ('uint8', -5, 300), ('int64', 2.5, 4.5), ('float16', -1e6, 1e6),
    ('float32', 0, 1), ('bool', 0, 1), ('int32', -1, 1)])
def test_make_tensor_bounds_match_torch(dtype, low, high):
    d = make_tensor(5000, dtype=getattr(dynagrad, dtype), device='cpu', low=low, high=high)
    t = torch.testing.make_tensor(5000, dtype=getattr(torch, dtype), device='cpu', low=low,
                                  high=high)
    dv, tv = d.float().numpy(), t.float().numpy()
    if dtype.startswith('float'):
        info = np.finfo(np.float16 if dtype == 'float16' else np.float32)
        lo, hi = max(low, float(info.min)), min(high, float(info.max))
        assert lo <= dv.min() and dv.max() <= hi and lo <= tv.min() and tv.max() <= hi
        assert abs(float(dv.mean()) - float(tv.mean())) < 0.05 * (hi - lo)
    else:
        assert set(np.unique(dv)) == set(np.unique(tv))


@pytest.mark.parametrize('dtype,low,high', [('int64', -1, 1), ('float32', 0, 0),
                                            ('bool', 0, 1)])
def test_make_tensor_exclude_zero(dtype, low, high):
    kw = dict(device='cpu', low=low, high=high, exclude_zero=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)
        d = make_tensor(500, dtype=getattr(dynagrad, dtype), **kw).float().numpy()
        t = torch.testing.make_tensor(500, dtype=getattr(torch, dtype), **kw).float().numpy()
    assert set(np.unique(d)) == set(np.unique(t))
    assert 0 not in d


def test_make_tensor_shapes_and_flags():
    for shape in [(2, 3), ((2, 3),), ([2, 3],), (), ((),), (dynagrad.Size([2, 3]),)]:
        d = make_tensor(*shape, dtype=dynagrad.float32, device='cpu')
        t = torch.testing.make_tensor(*[tuple(s) if isinstance(s, dynagrad.Size) else s
                                        for s in shape], dtype=torch.float32, device='cpu')
        assert tuple(d.shape) == tuple(t.shape)
    d = make_tensor(2, 3, dtype=dynagrad.float32, device='cpu', noncontiguous=True,
                    requires_grad=True)
    t = torch.testing.make_tensor(2, 3, dtype=torch.float32, device='cpu', noncontiguous=True,
                                  requires_grad=True)
    assert not d.is_contiguous() and not t.is_contiguous()
    assert d.stride() == t.stride()
    assert d.requires_grad and d.is_leaf
    one = make_tensor(1, dtype=dynagrad.float32, device='cpu', noncontiguous=True)
    assert one.is_contiguous()
    dynagrad.manual_seed(5)
    a = make_tensor(3, dtype=dynagrad.float64, device='cpu')
    dynagrad.manual_seed(5)
    assert np.array_equal(a.numpy(), make_tensor(3, dtype=dynagrad.float64, device='cpu').numpy())


def test_make_tensor_memory_format():
    if not hasattr(dynagrad, 'channels_last'):
        pytest.skip('dynagrad has no channels_last memory format')
    d = make_tensor(2, 3, 4, 5, dtype=dynagrad.float32, device='cpu',
                    memory_format=dynagrad.channels_last)
    t = torch.testing.make_tensor(2, 3, 4, 5, dtype=torch.float32, device='cpu',
                                  memory_format=torch.channels_last)
    assert d.stride() == t.stride()


MAKE_ERRORS = [
    (dict(dtype='float32', low=5, high=1), ValueError),
    (dict(dtype='float32', low=NAN), ValueError),
    (dict(dtype='float32', high=NAN), ValueError),
    (dict(dtype='float32', low=INF), ValueError),
    (dict(dtype='int64', low=3, high=3), ValueError),
    (dict(dtype='int64', requires_grad=True), ValueError),
    (dict(dtype='bool', requires_grad=True), ValueError),
    (dict(dtype='float32', noncontiguous=True, memory_format='contiguous_format'), ValueError),
]


@pytest.mark.parametrize('kwargs,exc', MAKE_ERRORS, ids=[str(i) for i in range(len(MAKE_ERRORS))])
def test_make_tensor_errors_match_torch(kwargs, exc):
    def call(lib, fn):
        kw = dict(kwargs, dtype=getattr(lib, kwargs['dtype']), device='cpu')
        if 'memory_format' in kw:
            kw['memory_format'] = getattr(lib, kw['memory_format'], 'given')
        return outcome(fn, 3, **kw)
    d = call(dynagrad, make_tensor)
    t = call(torch, torch.testing.make_tensor)
    assert d[0] is t[0] is exc
    # the value names differ (dynagrad.int64 / torch.int64), the texts do not
    assert re.sub(r'memory_format=\S+', '', d[1]) == re.sub(r'memory_format=\S+', '', t[1])


def test_make_tensor_needs_dtype_and_device():
    with pytest.raises(TypeError, match="required keyword-only argument: 'device'"):
        make_tensor(2, dtype=dynagrad.float32)
    with pytest.raises(TypeError, match="required keyword-only argument: 'dtype'"):
        make_tensor(2, device='cpu')


def test_make_tensor_low_equal_high_float_warns_like_torch():
    with pytest.warns(FutureWarning, match='Passing `low==high`'):
        d = make_tensor(3, dtype=dynagrad.float32, device='cpu', low=2, high=2)
    with pytest.warns(FutureWarning, match='Passing `low==high`'):
        t = torch.testing.make_tensor(3, dtype=torch.float32, device='cpu', low=2, high=2)
    assert d.tolist() == t.tolist() == [2.0, 2.0, 2.0]
