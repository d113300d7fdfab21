"""dynagrad.autograd.functional against torch.autograd.functional: values (and gradients of
the results with create_graph), tuple inputs and outputs, strategies, strict mode, errors."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import functional as DF
from torch.autograd import functional as TF

R = np.random.default_rng(3)
A, B = R.standard_normal(3), R.standard_normal((2, 3))


def f1(L):
    return lambda x: L.sin(x) * x.sum()


def f2(L):
    return lambda x, w: (L.tanh(w @ x), (x * x).sum())


def scalar(L):
    return lambda x, w: (L.exp(w @ x) ** 2).sum() + (x ** 3).sum()


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(t) for t in x]
    return x.detach().numpy()


def close(a, b):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(_np(a), _np(b), 1e-9, 1e-10)


def inputs(lib, *arrays):
    make = dynagrad.tensor if lib is dynagrad else torch.tensor
    return tuple(make(a.copy()) for a in arrays)


CASES = [
    ('vjp', lambda F, L, xs: F.vjp(f1(L), xs[0], xs[0] * 0 + 1)),
    ('vjp tuple', lambda F, L, xs: F.vjp(f2(L), xs, (xs[1][:, 0] * 0 + 1, xs[0].sum() * 0 + 2))),
    ('jvp', lambda F, L, xs: F.jvp(f1(L), xs[0], xs[0] * 0.5)),
    ('jvp tuple', lambda F, L, xs: F.jvp(f2(L), xs, (xs[0] * 0 + 1, xs[1] * 0.3))),
    ('jacobian', lambda F, L, xs: F.jacobian(f1(L), xs[0])),
    ('jacobian tuple', lambda F, L, xs: F.jacobian(f2(L), xs)),
    ('jacobian vectorized', lambda F, L, xs: F.jacobian(f2(L), xs, vectorize=True)),
    ('jacobian forward', lambda F, L, xs: F.jacobian(f2(L), xs, vectorize=True,
                                                     strategy='forward-mode')),
    ('hessian', lambda F, L, xs: F.hessian(lambda x: scalar(L)(x, xs[1]), xs[0])),
    ('hessian tuple', lambda F, L, xs: F.hessian(scalar(L), xs)),
    ('vhp', lambda F, L, xs: F.vhp(scalar(L), xs, (xs[0] * 0 + 1, xs[1] * 0.5))),
    ('hvp', lambda F, L, xs: F.hvp(scalar(L), xs, (xs[0] * 0 + 1, xs[1] * 0.5))),
]


@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_matches_torch(case):
    _, run = case
    close(run(DF, dynagrad, inputs(dynagrad, A, B)), run(TF, torch, inputs(torch, A, B)))


def test_create_graph_gives_differentiable_results():
    d = dynagrad.tensor(A.copy(), requires_grad=True)
    t = torch.tensor(A.copy(), requires_grad=True)
    dj = DF.jacobian(f1(dynagrad), d, create_graph=True)
    tj = TF.jacobian(f1(torch), t, create_graph=True)
    assert dj.requires_grad
    dj.pow(2).sum().backward()
    tj.pow(2).sum().backward()
    close(d.grad, t.grad)
    _, dh = DF.hvp(lambda x: (x.exp() * x).sum(), d, d.detach() * 0 + 1, create_graph=True)
    _, th = TF.hvp(lambda x: (x.exp() * x).sum(), t, t.detach() * 0 + 1, create_graph=True)
    close(dh, th)
    assert dh.requires_grad
    _, plain = DF.vjp(f1(dynagrad), d, d.detach())
    assert not plain.requires_grad


@pytest.mark.parametrize('call,exc,match', [
    (lambda F, L, x: F.jacobian(lambda y: L.ones(3) * 2, x, strict=True), RuntimeError,
     'Output 0 of the user-provided function does not require gradients'),
    (lambda F, L, x: F.vjp(lambda y: y.detach() * 2, x, x, strict=True), RuntimeError,
     'Output 0 of the user-provided function does not require gradients'),
    (lambda F, L, x: F.vjp(lambda y: y * 2, x), RuntimeError,
     'The vector v can only be None if the user-provided function returns a single Tensor '
     'with a single element'),
    (lambda F, L, x: F.jacobian(lambda y: y, x, strategy='sideways'), AssertionError,
     'Expected strategy to be either "forward-mode" or "reverse-mode"'),
    (lambda F, L, x: F.jacobian(lambda y: y, x, strategy='forward-mode'), NotImplementedError,
     'only implemented for `vectorize=True`'),
    (lambda F, L, x: F.jacobian(lambda y: y, x, strict=True, vectorize=True), RuntimeError,
     '`strict=True` and `vectorized=True` are not supported together'),
    (lambda F, L, x: F.jacobian(lambda y: 3, x), TypeError, 'must be either a Tensor or a tuple'),
])
def test_errors_as_torch(call, exc, match):
    for F, L in ((TF, torch), (DF, dynagrad)):
        x = (dynagrad.tensor if L is dynagrad else torch.tensor)(A.copy())
        with pytest.raises(exc, match=match):
            call(F, L, x)
