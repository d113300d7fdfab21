"""``out=`` on torch's functions that take it: values, dtypes, resizing, tuple results and
the errors, against torch."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg

A = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], np.float32)
B = np.array([[2.0, 1.0, -0.5], [3.0, -2.0, 0.25]], np.float32)

CASES = [
    ('div', lambda m, a, b, out: m.div(a, b, out=out)),
    ('sub', lambda m, a, b, out: m.sub(a, b, alpha=2, out=out)),
    ('mul', lambda m, a, b, out: m.mul(a, b, out=out)),
    ('maximum', lambda m, a, b, out: m.maximum(a, b, out=out)),
    ('lerp', lambda m, a, b, out: m.lerp(a, b, weight=0.25, out=out)),
    ('sqrt', lambda m, a, b, out: m.sqrt(a.abs(), out=out)),
    ('sign', lambda m, a, b, out: m.sign(a, out=out)),
    ('pow', lambda m, a, b, out: m.pow(a.abs(), 1.5, out=out)),
    ('nan_to_num', lambda m, a, b, out: m.nan_to_num(a / 0.0, nan=0.0, out=out)),
    ('mm', lambda m, a, b, out: m.mm(a, b.T, out=out)),
    ('mv', lambda m, a, b, out: m.mv(a, b[0], out=out)),
    ('sum_like', lambda m, a, b, out: m.mean(a, 1, out=out)),
    ('norm', lambda m, a, b, out: m.norm(a, dim=0, out=out)),
]


@pytest.mark.parametrize('name,call', CASES, ids=[c[0] for c in CASES])
def test_out_writes_the_result_in_place(name, call):
    for shape in ((0,), (9, 9)):        # empty: resized silently; other shape: with a warning
        theirs = torch.empty(shape)
        ours = dg.empty(shape)
        with warnings.catch_warnings(record=True) as caught_t:
            warnings.simplefilter('always')
            rt = call(torch, torch.tensor(A), torch.tensor(B), theirs)
        with warnings.catch_warnings(record=True) as caught_d:
            warnings.simplefilter('always')
            rd = call(dg, dg.tensor(A), dg.tensor(B), ours)
        assert rt is theirs and rd is ours
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
        assert [str(w.message)[:60] for w in caught_d] == \
            [str(w.message)[:60] for w in caught_t if 'Resize.cpp' in str(w.message)]


def test_out_may_be_an_input_and_casts_within_kind():
    for m in (torch, dg):
        a = m.tensor(A.astype(np.float64))
        assert m.mul(a, 2, out=a) is a
        np.testing.assert_array_equal(a.numpy(), A * 2)
        ints = m.tensor([5, 7])
        wide = m.empty(2, dtype=m.float64)
        m.add(ints, 1, out=wide)
        np.testing.assert_array_equal(wide.numpy(), [6.0, 8.0])
        assert wide.dtype == m.float64


def test_tuple_results_take_tuples():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], np.float32)
    for fn in ('sort', 'max'):
        got = []
        for m in (torch, dg):
            vals, idx = m.empty(0), m.empty(0, dtype=m.long)
            args = (m.tensor(x),) + ((1,) if fn == 'max' else ())
            res = getattr(m, fn)(*args, out=(vals, idx))
            assert res.values is vals and res.indices is idx
            got.append((vals.numpy(), idx.numpy()))
        np.testing.assert_array_equal(got[0][0], got[1][0])
        np.testing.assert_array_equal(got[0][1], got[1][1])


def test_errors_as_torch_and_nothing_written():
    for m in (torch, dg):
        out = m.zeros(3, dtype=m.int32)
        with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "
                                               'output type Int'):
            m.div(m.ones(3, dtype=m.float64), 2, out=out)
        np.testing.assert_array_equal(out.numpy(), [0, 0, 0])
        with pytest.raises(RuntimeError, match=r"div\(\): functions with out=... arguments don't "
                                               'support automatic differentiation'):
            m.div(m.ones(3, requires_grad=True), 2, out=m.empty(3))
        with m.no_grad():
            res = m.div(m.ones(3, requires_grad=True), 2, out=m.empty(3))
        assert not res.requires_grad


def test_reductions_and_linalg_take_out():
    a = np.array([[4.0, 2.0], [2.0, 3.0]])
    for m in (torch, dg):
        total = m.empty(2, dtype=m.float64)
        assert m.sum(m.tensor(a), 0, out=total) is total
        np.testing.assert_array_equal(total.numpy(), a.sum(0))
        L, info = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)
        res = m.linalg.cholesky_ex(m.tensor(a), out=(L, info))
        assert res.L is L and res.info is info and int(info) == 0
        np.testing.assert_allclose(L.numpy(), np.linalg.cholesky(a))



def _fronts():
    import dynagrad.fft
    import dynagrad.linalg
    import dynagrad.special
    for module in (dg, dg.special, dg.linalg, dg.fft, dg.nn.functional):
        for name in dir(module):
            front = getattr(module, name)
            if getattr(front, 'takes_out', False) and '_fn' in getattr(front, '__globals__', {}):
                yield f'{module.__name__}.{name}', front


def test_out_fronts_keep_each_functions_signature_defaults_and_name():
    # the fronts share compiled templates (out_args._front): each must still read as its
    # own function, with its own defaults, plus out=None before any **kwargs
    import inspect
    fronts = dict(_fronts())
    assert len(fronts) > 150
    for where, front in fronts.items():
        fn = front.__globals__['_fn']
        params = list(inspect.signature(fn).parameters.values())
        at = next((k for k, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
        out = inspect.Parameter('out', inspect.Parameter.KEYWORD_ONLY, default=None)
        expected = inspect.signature(fn).replace(parameters=params[:at] + [out] + params[at:])
        assert inspect.signature(front) == expected, where
        assert (front.__name__, front.__code__.co_name) == (fn.__name__, fn.__name__), where
    # defaults of two fronts sharing one template stay apart
    assert inspect.signature(dg.tril).parameters['diagonal'].default == 0
    x = dg.tensor(A)
    np.testing.assert_array_equal(dg.tril(x).numpy(), torch.tril(torch.tensor(A)).numpy())
    np.testing.assert_array_equal(dg.triu(x, 1).numpy(), torch.triu(torch.tensor(A), 1).numpy())
