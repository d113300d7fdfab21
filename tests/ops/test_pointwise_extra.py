"""Pointwise checks the conformance table cannot express, still against torch.

The NumPy fallbacks of the special functions (scipy absent), ops whose backward PyTorch
does not define (floor_divide, scalar % tensor, asinh_/acosh_/atanh_), in-place forms of
the integer and boolean ops, and ops returning Python bools (allclose, equal).
"""
import operator

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.ops import special


def _both(array, requires_grad=False):
    return (dynagrad.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def _same(d, t, rtol=1e-12, atol=0.0):
    assert str(d.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                               equal_nan=True)


# -- special functions: scipy and the NumPy fallbacks ---------------------------------------

@pytest.fixture(params=['scipy', 'numpy'])
def backend(request, monkeypatch):
    if request.param == 'numpy':
        monkeypatch.setattr(special, 'USE_SCIPY', False)
    return request.param


_RNG = np.random.default_rng(0)
_WIDE = np.concatenate([_RNG.uniform(-8, 8, 200), 10 ** _RNG.uniform(-6, 3, 50),
                        [0.5, 1.0, 2.0, 1e-300, 123.25]])
_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0])


@pytest.mark.parametrize('name', ['erf', 'erfc', 'lgamma', 'digamma'])
def test_special_matches_torch(backend, name):
    x = np.concatenate([_WIDE, _SPECIAL])
    d, t = _both(x)
    _same(getattr(dynagrad, name)(d), getattr(torch, name)(t), rtol=1e-11, atol=1e-300)


def test_erfinv_matches_torch(backend):
    x = np.concatenate([_RNG.uniform(-1, 1, 300), 1 - 10 ** _RNG.uniform(-15, -1, 40),
                        -1 + 10 ** _RNG.uniform(-15, -1, 40),
                        [0.0, -0.0, 1.0, -1.0, 1.5, np.nan, 1e-300]])
    d, t = _both(x)
    _same(dynagrad.erfinv(d), torch.erfinv(t), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize('n', [1, 2, 3])
def test_polygamma_matches_torch(backend, n):
    x = np.concatenate([10 ** _RNG.uniform(-3, 3, 100), _RNG.uniform(-6, -0.01, 50)])
    x = x[np.abs(x - np.round(x)) > 1e-2]       # away from the poles
    d, t = _both(x)
    # torch's own trigamma is good to ~5e-10 (scipy and the fallback agree to 1e-13)
    _same(dynagrad.polygamma(n, d), torch.polygamma(n, t), rtol=1e-8 if n == 1 else 1e-10)


def test_special_float32(backend):
    x = np.linspace(-0.9, 0.9, 7, dtype=np.float32)
    for name in ('erf', 'erfc', 'erfinv'):
        d, t = _both(x)
        _same(getattr(dynagrad, name)(d), getattr(torch, name)(t), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('name', ['erf', 'erfc', 'erfinv', 'lgamma', 'digamma'])
def test_special_gradients_fallback(monkeypatch, name):
    monkeypatch.setattr(special, 'USE_SCIPY', False)
    x = np.array([0.3, 0.7, 0.45]) if name == 'erfinv' else np.array([0.3, 1.7, 2.5])
    d = dynagrad.tensor(x, requires_grad=True)
    assert dynagrad.autograd.gradcheck(getattr(dynagrad, name), (d,))
    assert dynagrad.autograd.gradgradcheck(getattr(dynagrad, name), (d,))


def test_special_fallback_never_imports_scipy(monkeypatch):
    monkeypatch.setattr(special, 'USE_SCIPY', False)
    monkeypatch.setattr(special, '_scipy_special', None)
    assert special._sc() is None
    x = dynagrad.tensor([0.25, 0.5])
    assert dynagrad.digamma(x).shape == (2,)


# -- ops torch records without a derivative -------------------------------------------------

@pytest.mark.parametrize('make', [
    lambda lib, x: lib.floor_divide(x, 0.7),
    lambda lib, x: x // x.detach().flip(0),
    lambda lib, x: 2.5 // x,
    lambda lib, x: 2.5 % x,
    lambda lib, x: lib.remainder(2.5, x),
], ids=['floor_divide', 'floordiv_operator', 'rfloordiv', 'rmod', 'remainder_scalar_self'])
def test_no_derivative_ops(make):
    x = np.array([0.5, -1.3, 2.2], np.float32)
    results = []
    for lib in (dynagrad, torch):
        t = lib.tensor(x.copy(), requires_grad=True)
        y = make(lib, t)
        assert y.requires_grad
        assert y.grad_fn.name().replace('torch::autograd::', '') == 'NotImplemented'
        with pytest.raises(RuntimeError, match=r'derivative for aten::\w+ is not implemented'):
            y.sum().backward()
        results.append(y)
    _same(*results, rtol=1e-6)


def test_floor_divide_inplace():
    a = np.array([[5.5, -7.25, 3.0], [1.0, -2.0, 9.5]], np.float32)
    b = np.array([2.0, -1.5, 0.75], np.float32)
    outs = []
    for lib in (dynagrad, torch):
        x = lib.tensor(a.copy(), requires_grad=True).clone()
        y = x.floor_divide_(lib.tensor(b))
        assert y is x and x.grad_fn.name().endswith('NotImplemented')
        with pytest.raises(RuntimeError, match='derivative for aten::floor_divide_ is not'):
            x.sum().backward()
        z = lib.tensor(a.copy())
        z //= 2
        outs.append((x, z))
    _same(outs[0][0], outs[1][0])
    _same(outs[0][1], outs[1][1])


@pytest.mark.parametrize('name,x', [('asinh', [0.3, -1.2]), ('acosh', [1.5, 2.5]),
                                    ('atanh', [0.2, -0.6])])
def test_inverse_hyperbolic_inplace_has_no_derivative(name, x):
    x = np.array(x)
    outs = []
    for lib in (dynagrad, torch):
        y = lib.tensor(x.copy(), requires_grad=True).clone()
        getattr(y, name + '_')()
        assert y.grad_fn.name() == name.capitalize() + 'Backward1'
        with pytest.raises(NotImplementedError, match=f"inplace version of {name}"):
            y.sum().backward()
        outs.append(y)
        z = lib.tensor(x.copy())            # without grad it is an ordinary in-place op
        getattr(z, name + '_')()
        outs.append(z)
    _same(outs[0], outs[2])
    _same(outs[1], outs[3])


# -- in-place integer and boolean ops, and their operators -----------------------------------

_INTS = np.array([[-7, 12, 0], [5, -100, 33]])
_CNT = np.array([[1, 0, 3], [64, -1, 5]])
_BOOLS = np.array([[True, False, True], [False, False, True]])


@pytest.mark.parametrize('method,op,lhs,rhs', [
    ('bitwise_and_', operator.iand, _INTS, _INTS[::-1]),
    ('bitwise_or_', operator.ior, _INTS, _INTS[::-1]),
    ('bitwise_xor_', operator.ixor, _INTS, _INTS[::-1]),
    ('bitwise_and_', operator.iand, _BOOLS, _BOOLS[::-1]),
    ('bitwise_xor_', operator.ixor, _BOOLS, True),
    ('bitwise_or_', operator.ior, _INTS, 6),
    ('bitwise_left_shift_', operator.ilshift, _INTS, _CNT),
    ('bitwise_right_shift_', operator.irshift, _INTS, _CNT),
    ('bitwise_left_shift_', operator.ilshift, _INTS.astype(np.int32), 3),
    ('remainder_', operator.imod, _INTS, np.array([3, -4, 5])),
    ('floor_divide_', operator.ifloordiv, _INTS, np.array([3, -4, 5])),
], ids=lambda v: v if isinstance(v, str) else None)
def test_integer_inplace(method, op, lhs, rhs):
    for use_operator in (False, True):
        outs = []
        for lib in (dynagrad, torch):
            x = lib.tensor(lhs.copy())
            other = lib.tensor(rhs.copy()) if isinstance(rhs, np.ndarray) else rhs
            version = x._version
            if use_operator:
                y = op(x, other)
            else:
                y = getattr(x, method)(other)
            assert y is x and x._version == version + 1
            outs.append(x)
        _same(*outs)


def test_bitwise_not_and_logical_not_inplace():
    for arr, name in ((_INTS, 'bitwise_not_'), (_BOOLS, 'bitwise_not_'),
                      (np.array([0.0, 1.5, -0.0]), 'logical_not_'), (_INTS, 'logical_not_')):
        outs = []
        for lib in (dynagrad, torch):
            x = lib.tensor(arr.copy())
            assert getattr(x, name)() is x
            outs.append(x)
        _same(*outs)


@pytest.mark.parametrize('name', ['logical_and_', 'logical_or_', 'logical_xor_'])
def test_logical_inplace_keeps_target_dtype(name):
    a = np.array([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])
    b = np.array([1.0, 0.0, 2.0])
    outs = []
    for lib in (dynagrad, torch):
        x = lib.tensor(a.copy(), requires_grad=True).clone()
        getattr(x, name)(lib.tensor(b))
        assert x.grad_fn.name() == 'CloneBackward0'   # history unchanged
        outs.append(x)
    _same(*outs)


@pytest.mark.parametrize('fn,exc', [
    (lambda lib: lib.ones(2).bitwise_and_(lib.ones(2)), NotImplementedError),
    (lambda lib: lib.ones(2, dtype=lib.int64).bitwise_left_shift_(1.5), RuntimeError),
    (lambda lib: ~lib.ones(2), TypeError),
    (lambda lib: lib.ones(2, dtype=lib.bool).__ilshift__(lib.ones(2, dtype=lib.bool)),
     NotImplementedError),
    (lambda lib: lib.ones(2, dtype=lib.int64).remainder_(lib.zeros(2, dtype=lib.int64)),
     RuntimeError),
    (lambda lib: lib.ones(2, dtype=lib.int64).logical_and_(1), TypeError),
])
def test_integer_inplace_errors(fn, exc):
    for lib in (torch, dynagrad):
        with pytest.raises(exc):
            fn(lib)


def test_nondifferentiable_inplace_on_leaf():
    """torch lets a non-differentiable in-place op write into a leaf requiring grad."""
    for lib in (torch, dynagrad):
        x = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
        x.logical_and_(lib.tensor([1.0, 1.0, 0.0]))
        assert x.is_leaf and x.tolist() == [1.0, 0.0, 0.0]


# -- Python-bool results -----------------------------------------------------------------------

@pytest.mark.parametrize('a,b,kw', [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-6]), {}),
    (np.array([1.0, 2.0]), np.array([1.0, 2.1]), {}),
    (np.array([1.0, 2.0]), np.array([1.0, 2.1]), dict(atol=0.2)),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), {}),
    (np.array([1.0, np.nan]), np.array([1.0, np.nan]), dict(equal_nan=True)),
    (np.array([[1.0, 2.0]]), np.array([1.0, 2.0]), {}),
    (np.array([1, 2]), np.array([1, 3]), dict(rtol=0.5)),
])
def test_allclose(a, b, kw):
    d = dynagrad.allclose(dynagrad.tensor(a), dynagrad.tensor(b), **kw)
    t = torch.allclose(torch.tensor(a), torch.tensor(b), **kw)
    assert d is t
    assert dynagrad.tensor(a).allclose(dynagrad.tensor(b), **kw) is t


@pytest.mark.parametrize('a,b', [
    (np.array([1.0, 2.0]), np.array([1.0, 2.0])),
    (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
    (np.array([1, 2]), np.array([1.0, 2.0])),
    (np.array([1.0, 2.0]), np.array([[1.0, 2.0]])),
    (np.array([np.nan]), np.array([np.nan])),
    (np.zeros((0, 2)), np.zeros((0, 2))),
])
def test_equal(a, b):
    t = torch.equal(torch.tensor(a), torch.tensor(b))
    assert dynagrad.equal(dynagrad.tensor(a), dynagrad.tensor(b)) is t
    assert dynagrad.tensor(a).equal(dynagrad.tensor(b)) is t


def test_allclose_errors_like_torch():
    for lib in (torch, dynagrad):
        with pytest.raises(RuntimeError):
            lib.allclose(lib.ones(2), lib.ones(2, dtype=lib.float64))
        with pytest.raises(TypeError):
            lib.equal(lib.ones(2), 1.0)


# -- gradients at special points ---------------------------------------------------------------

def test_maximum_tie_splits_gradient_double_backward():
    for lib in (torch, dynagrad):
        a = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.0, 1.0, 4.0], dtype=lib.float64, requires_grad=True)
        ga, gb = lib.autograd.grad(lib.maximum(a, b).sum(), (a, b), create_graph=True)
        assert ga.tolist() == [0.5, 1.0, 0.0] and gb.tolist() == [0.5, 0.0, 1.0]


def test_xlogy_gradient_at_zero():
    x = np.array([0.0, 0.0, 0.0, 2.0])
    y = np.array([0.0, 2.0, -1.0, 3.0])
    grads = []
    for lib in (dynagrad, torch):
        a = lib.tensor(x.copy(), requires_grad=True)
        b = lib.tensor(y.copy(), requires_grad=True)
        lib.xlogy(a, b).sum().backward()
        grads.append((a.grad, b.grad))
    _same(grads[0][0], grads[1][0])
    _same(grads[0][1], grads[1][1])


def test_abs_sign_at_zero_and_rounding_grads():
    x = np.array([0.0, -0.0, 1.5, -2.5])
    grads = []
    for lib in (dynagrad, torch):
        t = lib.tensor(x.copy(), requires_grad=True)
        (t.abs() + t.floor() + t.ceil() + t.round() + t.trunc() + t.frac()
         + t.round(decimals=1)).sum().backward()
        grads.append(t.grad)
    _same(*grads)
