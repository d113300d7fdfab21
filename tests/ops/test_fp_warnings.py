"""PyTorch never warns when finite inputs give inf or nan (log(0), 1/0, exp(1000)); neither
do dynagrad's ops, forward or backward, and NumPy's error state is theirs to restore."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad.nn import functional as F

EDGE = [0.0, -1.0, 1000.0, 1.0, -1000.0]

CASES = [
    ('div', lambda m, x: m.div(x, m.zeros_like(x))),
    ('rdiv', lambda m, x: 1.0 / x),
    ('pow', lambda m, x: m.pow(x, -0.5)),
    ('exp', lambda m, x: m.exp(x)),
    ('exp2', lambda m, x: m.exp2(x)),
    ('expm1', lambda m, x: m.expm1(x)),
    ('log', lambda m, x: m.log(x)),
    ('log2', lambda m, x: m.log2(x)),
    ('log10', lambda m, x: m.log10(x)),
    ('log1p', lambda m, x: m.log1p(x)),
    ('sqrt', lambda m, x: m.sqrt(x)),
    ('rsqrt', lambda m, x: m.rsqrt(x)),
    ('reciprocal', lambda m, x: m.reciprocal(x)),
    ('sinh', lambda m, x: m.sinh(x)),
    ('cosh', lambda m, x: m.cosh(x)),
    ('asin', lambda m, x: m.asin(x)),
    ('acos', lambda m, x: m.acos(x)),
    ('acosh', lambda m, x: m.acosh(x)),
    ('atanh', lambda m, x: m.atanh(x)),
    ('logit', lambda m, x: m.logit(x)),
    ('erfinv', lambda m, x: m.erfinv(x)),
    ('lgamma', lambda m, x: m.lgamma(x)),
    ('digamma', lambda m, x: m.digamma(x)),
    ('xlogy', lambda m, x: m.xlogy(m.ones_like(x), x)),
    ('fmod', lambda m, x: m.fmod(x, 0.0)),
    ('remainder', lambda m, x: m.remainder(x, 0.0)),
    ('mean of empty', lambda m, x: x[:0].mean()),
    ('var of one', lambda m, x: x[:1].var()),
    ('softplus', lambda m, x: m.nn.functional.softplus(x * 100)),
    ('poisson_nll_loss', lambda m, x: m.nn.functional.poisson_nll_loss(
        x, m.zeros_like(x), reduction='none')),
    ('binary_cross_entropy', lambda m, x: m.nn.functional.binary_cross_entropy(
        m.sigmoid(x), m.ones_like(x), reduction='none')),
]


@pytest.mark.parametrize('dtype', ['float32', 'float64'])
@pytest.mark.parametrize('name,fn', CASES, ids=[c[0] for c in CASES])
def test_no_floating_point_warning_forward_or_backward(name, fn, dtype):
    x = dg.tensor(EDGE, dtype=getattr(dg, dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)    # PyTorch's own (var of one value)
        warnings.simplefilter('error', RuntimeWarning)  # NumPy's floating-point warnings
        y = fn(dg, x)
        y.sum().backward()
    # the same values as PyTorch, non-finite ones included
    t = torch.tensor(EDGE, dtype=getattr(torch, dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ty = fn(torch, t)
        ty.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5,
                               equal_nan=True)


def test_numpy_error_state_is_restored():
    before = np.geterr()
    with np.errstate(divide='raise'):
        x = dg.tensor([0.0, 1.0], requires_grad=True)
        y = x.log()
        assert np.geterr()['divide'] == 'raise'
        y.sum().backward()
        assert np.geterr()['divide'] == 'raise'
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))           # the user's own NumPy code keeps its setting
    with pytest.raises(RuntimeError):
        dg.div(dg.ones(2, 3), dg.ones(4))  # an op that fails restores the state too
    assert np.geterr() == before
