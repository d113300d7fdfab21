"""dynagrad.special beyond the op table: float64 accuracy where PyTorch's own values are
float32-accurate (against mpmath), the NumPy forms used without SciPy (against torch),
what happens without SciPy where there is no NumPy form, derivatives PyTorch lacks, and
the names that are top-level functions under a second name."""
import math

import mpmath
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad import special
from dynagrad.ops import special as ops_special

X = np.array([-7.5, -2.0, -0.3, 0.1, 0.9, 2.5, 6.0, 14.0])
POS_X = np.array([0.1, 0.9, 2.5, 6.0, 14.0])

MPMATH = {
    'bessel_j0': (X, lambda v: mpmath.besselj(0, v)),
    'bessel_j1': (X, lambda v: mpmath.besselj(1, v)),
    'bessel_y0': (POS_X, lambda v: mpmath.bessely(0, v)),
    'bessel_y1': (POS_X, lambda v: mpmath.bessely(1, v)),
    'modified_bessel_k0': (POS_X, lambda v: mpmath.besselk(0, v)),
    'modified_bessel_k1': (POS_X, lambda v: mpmath.besselk(1, v)),
    'scaled_modified_bessel_k0': (POS_X, lambda v: mpmath.besselk(0, v) * mpmath.exp(v)),
    'scaled_modified_bessel_k1': (POS_X, lambda v: mpmath.besselk(1, v) * mpmath.exp(v)),
    'airy_ai': (X, mpmath.airyai),
    'spherical_bessel_j0': (X, lambda v: mpmath.sin(v) / v),
    'erfcx': (X, lambda v: mpmath.exp(v * v) * mpmath.erfc(v)),
    'i0e': (X, lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v))),
    'i1e': (X, lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v))),
    'log_ndtr': (X, lambda v: mpmath.log1p(-mpmath.ncdf(-v))),
}


@pytest.mark.parametrize('name', sorted(MPMATH))
def test_float64_values_against_mpmath(name):
    mpmath.mp.dps = 40
    x, exact = MPMATH[name]
    got = getattr(special, name)(dynagrad.tensor(x)).numpy()
    want = np.array([float(exact(mpmath.mpf(float(v)))) for v in x])
    np.testing.assert_allclose(got, want, rtol=2e-14, atol=1e-300)


FALLBACKS = ['entr', 'erfcx', 'i0e', 'i1', 'i1e', 'ndtr', 'ndtri', 'log_ndtr',
             'spherical_bessel_j0', 'modified_bessel_i0', 'modified_bessel_i1']


@pytest.mark.parametrize('name', FALLBACKS)
def test_numpy_forms_without_scipy(name, monkeypatch):
    monkeypatch.setattr(ops_special, 'USE_SCIPY', False)
    x = np.array([0.02, 0.3, 0.5, 0.97]) if name == 'ndtri' else \
        np.concatenate([X, [30.0, -30.0]])
    got = getattr(special, name)(dynagrad.tensor(x)).numpy()
    want = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


def test_zeta_without_scipy(monkeypatch):
    monkeypatch.setattr(ops_special, 'USE_SCIPY', False)
    s, q = np.array([2.0, 3.5, 1.5]), np.array([1.0, 0.7, 4.0])
    np.testing.assert_allclose(special.zeta(dynagrad.tensor(s), dynagrad.tensor(q)).numpy(),
                               torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(),
                               rtol=1e-10)


def test_bessel_without_scipy_says_what_to_install(monkeypatch):
    monkeypatch.setattr(ops_special, 'USE_SCIPY', False)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'dynagrad\[special\]'"):
        special.bessel_j0(dynagrad.ones(3))


def test_derivatives_as_torch():
    x = dynagrad.tensor([0.5, 1.5], requires_grad=True)
    for name in ('bessel_j0', 'airy_ai', 'spherical_bessel_j0', 'modified_bessel_i0'):
        assert not getattr(special, name)(x).requires_grad
    assert not special.chebyshev_polynomial_t(x, 3).requires_grad
    q = dynagrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not "
                                                  "implemented"):
        special.zeta(x + 1, q).sum().backward()
    (g,) = dynagrad.autograd.grad(special.zeta(dynagrad.tensor([2.0, 3.0]), q).sum(), q)
    tq = torch.tensor([1.0, 2.0], requires_grad=True)
    (tg,) = torch.autograd.grad(torch.special.zeta(torch.tensor([2.0, 3.0]), tq).sum(), tq)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)


def test_second_names_of_top_level_functions():
    x = dynagrad.tensor([0.2, 0.7])
    assert special.expit is dynagrad.sigmoid and special.gammaln is dynagrad.lgamma
    assert special.psi is special.digamma is dynagrad.digamma
    assert special.multigammaln is dynagrad.mvlgamma
    assert special.gammainc is dynagrad.igamma and special.gammaincc is dynagrad.igammac
    np.testing.assert_allclose(special.softmax(x, 0).numpy(),
                               torch.special.softmax(torch.tensor([0.2, 0.7]), 0).numpy(),
                               rtol=1e-6)
    assert special.log_softmax(x, 0, dtype=dynagrad.float64).dtype == dynagrad.float64
    assert math.isclose(special.ndtr(dynagrad.tensor(0.0)).item(), 0.5)
    with pytest.raises(TypeError, match="special_entr\\(\\): argument 'input'"):
        special.entr(0.5)
