"""Complex tensors through the ops PyTorch computes on them: one declarative table, every row
checked the same way against torch (values, result dtype, gradients for a random complex
cotangent) and with gradcheck / gradgradcheck on complex128 (PyTorch's convention: a
gradient is the conjugate Wirtinger derivative, and complex numbers are checked as pairs of
reals).

A row: ``(name, fn, inputs)``. ``fn(lib, *tensors)`` is written once for both libraries;
``inputs`` spells each input: 'c' complex, 'r' real, 'p' positive real, 'n' complex away
from zero and the branch cuts, followed by its shape.
"""
import warnings
import zlib

import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')


def C(shape=(3,)):
    return ('c', shape)


def R(shape=(3,)):
    return ('r', shape)


def N(shape=(3,)):
    return ('n', shape)


ROWS = [
    # arithmetic, with real and complex operands mixed (promotion, real parts of gradients)
    ('add', lambda L, a, b: a + b, [C(), C()]),
    ('add_real', lambda L, a, b: a + b, [C((2, 3)), R((3,))]),
    ('sub_alpha', lambda L, a, b: L.sub(a, b, alpha=2), [C(), C()]),
    ('mul', lambda L, a, b: a * b, [C(), C()]),
    ('mul_real', lambda L, a, b: a * b, [R((2, 3)), C((3,))]),
    ('mul_scalar', lambda L, a: a * (2 - 3j), [C()]),
    ('real_times_complex_number', lambda L, a: a * 1j, [R()]),
    ('div', lambda L, a, b: a / b, [C(), N()]),
    ('rdiv', lambda L, a: 2 / a, [N()]),
    ('neg', lambda L, a: -a, [C()]),
    ('pow_scalar', lambda L, a: a ** 3, [C()]),
    ('pow_complex_scalar', lambda L, a: a ** (0.5 + 1j), [N()]),
    ('pow_tensor', lambda L, a, b: a ** b, [N(), C()]),
    ('rpow', lambda L, a: 2 ** a, [C()]),
    ('square', lambda L, a: a.square(), [C()]),
    ('reciprocal', lambda L, a: a.reciprocal(), [N()]),
    ('addcmul', lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), [C(), C(), C()]),
    ('addcdiv', lambda L, a, b, c: L.addcdiv(a, b, c, value=0.5), [C(), C(), N()]),
    ('lerp', lambda L, a, b: L.lerp(a, b, 0.3), [C(), C()]),
    # holomorphic functions
    *[(f, (lambda f: lambda L, a: getattr(a, f)())(f), [N()]) for f in (
        'exp', 'log', 'log2', 'log10', 'log1p', 'expm1', 'sqrt', 'rsqrt', 'sin', 'cos', 'tan',
        'sinh', 'cosh', 'tanh', 'asin', 'acos', 'atan', 'asinh', 'acosh', 'atanh', 'sigmoid')],
    # the non-holomorphic ones
    ('abs', lambda L, a: a.abs(), [N()]),
    ('angle', lambda L, a: a.angle(), [N()]),
    ('sgn', lambda L, a: a.sgn(), [N()]),
    ('conj', lambda L, a, b: a.conj() * b, [C(), C()]),
    ('conj_physical', lambda L, a, b: a.conj_physical() * b, [C(), C()]),
    ('real', lambda L, a: a.real * 2, [C()]),
    ('imag', lambda L, a: a.imag * 2, [C()]),
    ('view_as_real', lambda L, a: L.view_as_real(a) ** 2, [C((2, 3))]),
    ('view_as_complex', lambda L, a: L.view_as_complex(a) ** 2, [R((3, 2))]),
    ('complex', lambda L, a, b: L.complex(a, b) ** 2, [R((2, 3)), R((3,))]),
    ('polar', lambda L, a, b: L.polar(a, b) ** 2, [('p', (3,)), R()]),
    ('abs_squared_loss', lambda L, a: (a.abs() ** 2).sum(), [C()]),
    # reductions
    ('sum', lambda L, a: a.sum(), [C((2, 3))]),
    ('sum_dim', lambda L, a: a.sum(1), [C((2, 3))]),
    ('mean', lambda L, a: a.mean(0), [C((2, 3))]),
    ('prod', lambda L, a: a.prod(1), [N((2, 3))]),
    ('cumsum', lambda L, a: a.cumsum(1), [C((2, 3))]),
    ('cumprod', lambda L, a: a.cumprod(1), [N((2, 3))]),
    ('var', lambda L, a: a.var(1), [C((2, 3))]),
    ('std', lambda L, a: a.std(), [C((2, 3))]),
    ('norm', lambda L, a: a.norm(), [N((2, 3))]),
    ('vector_norm_1', lambda L, a: L.linalg.vector_norm(a, 1, dim=1), [N((2, 3))]),
    ('vector_norm_3', lambda L, a: L.linalg.vector_norm(a, 3), [N((2, 3))]),
    ('trace', lambda L, a: a.trace(), [C((3, 3))]),
    ('logsumexp', lambda L, a: L.logsumexp(a, 1), [C((2, 3))]),
    ('trapezoid', lambda L, a: L.trapezoid(a), [C((2, 3))]),
    ('cov', lambda L, a: L.cov(a), [C((2, 4))]),
    ('corrcoef', lambda L, a: L.corrcoef(a), [C((2, 4))]),
    ('matrix_norm', lambda L, a: L.linalg.matrix_norm(a), [C((2, 3))]),
    ('vecdot', lambda L, a, b: L.linalg.vecdot(a, b), [C((2, 3)), C((2, 3))]),
    ('det_singular', lambda L, a: L.linalg.det(a * L.tensor([1.0, 1.0, 0.0])), [C((3, 3))]),
    # products
    ('matmul', lambda L, a, b: a @ b, [C((2, 3)), C((3, 4))]),
    ('mv', lambda L, a, b: a @ b, [C((2, 3)), C((3,))]),
    ('bmm', lambda L, a, b: L.bmm(a, b), [C((2, 2, 3)), C((2, 3, 2))]),
    ('dot', lambda L, a, b: L.dot(a, b), [C(), C()]),
    ('vdot', lambda L, a, b: L.vdot(a, b), [C(), C()]),
    ('outer', lambda L, a, b: L.outer(a, b), [C(), C((2,))]),
    ('einsum', lambda L, a, b: L.einsum('ij,jk->ik', a, b), [C((2, 3)), C((3, 2))]),
    ('addmm', lambda L, a, b, c: L.addmm(a, b, c, beta=0.5), [C((2, 2)), C((2, 3)), C((3, 2))]),
    ('linear', lambda L, x, w: L.nn.functional.linear(x, w), [C((2, 3)), C((4, 3))]),
    ('mH', lambda L, a: a.mH @ a, [C((3, 2))]),
    ('inv', lambda L, a: L.linalg.inv(a + 3 * L.eye(3)), [C((2, 3, 3))]),
    ('solve', lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3), b), [C((3, 3)), C((3, 2))]),
    ('matrix_exp', lambda L, a: L.linalg.matrix_exp(a * 0.3), [C((2, 3, 3))]),
    ('det', lambda L, a: L.linalg.det(a), [C((2, 3, 3))]),
    ('adjoint', lambda L, a: a.adjoint() * 2, [C((3, 2))]),
    # shapes and indexing
    ('reshape', lambda L, a: a.reshape(3, 2) * 1j, [C((2, 3))]),
    ('transpose', lambda L, a: a.t() * 1j, [C((2, 3))]),
    ('permute', lambda L, a: a.permute(2, 0, 1), [C((2, 3, 2))]),
    ('flip', lambda L, a: a.flip(0), [C((2, 3))]),
    ('cat', lambda L, a, b: L.cat([a, b], 1), [C((2, 3)), C((2, 1))]),
    ('stack', lambda L, a, b: L.stack([a, b]), [C(), C()]),
    ('expand', lambda L, a: a.expand(2, 3) * 2, [C((1, 3))]),
    ('getitem', lambda L, a: a[1, ::2], [C((2, 3))]),
    ('index_select', lambda L, a: a.index_select(1, L.tensor([2, 0, 2])), [C((2, 3))]),
    ('gather', lambda L, a: a.gather(1, L.tensor([[0, 0], [2, 1]])), [C((2, 3))]),
    ('where', lambda L, a, b: L.where(L.tensor([True, False, True]), a, b), [C(), C()]),
    ('masked_fill', lambda L, a: a.masked_fill(L.tensor([True, False, True]), 2 + 1j), [C()]),
    ('diagonal', lambda L, a: a.diagonal(), [C((3, 3))]),
    ('tril', lambda L, a: a.tril(), [C((3, 3))]),
    ('roll', lambda L, a: a.roll(1, 1), [C((2, 3))]),
    ('repeat', lambda L, a: a.repeat(2, 1), [C((2, 3))]),
    ('clone', lambda L, a: a.clone() * 1j, [C()]),
    ('to_complex', lambda L, a: a.to(L.complex128) * (1 + 1j), [R()]),
]

NO_GRADGRAD = {'view_as_complex', 'complex', 'polar'}
# det at a singular matrix: its first derivative comes from the SVD; its second derivative and
# forward-mode tangent go through the inverse, which does not exist there (README: not yet)
FIRST_ORDER_ONLY = {'det_singular'}
ROW_IDS = [r[0] for r in ROWS]


def _values(spec, rng):
    kind, shape = spec
    if kind == 'r':
        return rng.standard_normal(shape)
    if kind == 'p':
        return rng.uniform(0.5, 2.0, shape)
    if kind == 'n':     # right half plane, |z| in [0.3, 0.9]: away from 0 and branch cuts
        r, t = rng.uniform(0.3, 0.9, shape), rng.uniform(-1.2, 1.2, shape)
        return r * np.exp(1j * t)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _inputs(lib, arrays, complex_dtype):
    real = {np.complex64: np.float32, np.complex128: np.float64}[complex_dtype]
    out = []
    for a in arrays:
        a = a.astype(complex_dtype if np.iscomplexobj(a) else real)
        out.append(lib.tensor(a.copy(), requires_grad=True) if lib is torch else
                   dynagrad.tensor(a.copy(), requires_grad=True))
    return out


def _cotangent(rng, out):
    shape = tuple(out.shape)
    v = rng.standard_normal(shape)
    if out.is_complex():
        v = v + 1j * rng.standard_normal(shape)
    return v


def _numpy(t):
    return t.detach().resolve_conj().numpy()


@pytest.mark.parametrize('dtype', [np.complex64, np.complex128], ids=['complex64', 'complex128'])
@pytest.mark.parametrize('row', ROWS, ids=ROW_IDS)
def test_value_and_gradient_match_torch(row, dtype):
    name, fn, specs = row
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [_values(s, rng) for s in specs]
    ours = _inputs(dynagrad, arrays, dtype)
    theirs = _inputs(torch, arrays, dtype)
    out, expected = fn(dynagrad, *ours), fn(torch, *theirs)
    assert str(out.dtype).split('.')[-1] == str(expected.dtype).split('.')[-1]
    assert tuple(out.shape) == tuple(expected.shape)
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.complex64 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_numpy(out), _numpy(expected), **tol)
    v = _cotangent(rng, expected)
    grads = dynagrad.autograd.grad(out, ours, dynagrad.tensor(v.astype(_numpy(out).dtype)),
                                   allow_unused=True)
    expected_grads = torch.autograd.grad(expected, theirs, torch.tensor(
        v.astype(_numpy(expected).dtype)), allow_unused=True)
    for g, e in zip(grads, expected_grads):
        assert (g is None) == (e is None)
        if g is not None:
            assert g.dtype.name == str(e.dtype).split('.')[-1]
            np.testing.assert_allclose(_numpy(g), _numpy(e), **tol)


@pytest.mark.parametrize('row', ROWS, ids=ROW_IDS)
def test_gradcheck(row):
    name, fn, specs = row
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    inputs = _inputs(dynagrad, [_values(s, rng) for s in specs], np.complex128)
    assert dynagrad.autograd.gradcheck(lambda *xs: fn(dynagrad, *xs), inputs)


@pytest.mark.parametrize('row', [r for r in ROWS if r[0] not in NO_GRADGRAD | FIRST_ORDER_ONLY],
                         ids=[n for n in ROW_IDS if n not in NO_GRADGRAD | FIRST_ORDER_ONLY])
def test_gradgradcheck(row):
    name, fn, specs = row
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    inputs = _inputs(dynagrad, [_values(s, rng) for s in specs], np.complex128)
    assert dynagrad.autograd.gradgradcheck(lambda *xs: fn(dynagrad, *xs), inputs)


@pytest.mark.parametrize('row', [r for r in ROWS if r[0] not in FIRST_ORDER_ONLY],
                         ids=[n for n in ROW_IDS if n not in FIRST_ORDER_ONLY])
def test_forward_mode_tangent_matches_torch(row):
    name, fn, specs = row
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    arrays = [_values(s, rng) for s in specs]
    tangents = [_values(('r' if s[0] in 'rp' else 'c', s[1]), rng) for s in specs]
    results = []
    for lib, fw in ((dynagrad, dynagrad.autograd.forward_ad), (torch, torch.autograd.forward_ad)):
        primals = _inputs(lib, arrays, np.complex128)
        duals = _inputs(lib, tangents, np.complex128)
        with fw.dual_level():
            out = fn(lib, *[fw.make_dual(p.detach(), t.detach())
                            for p, t in zip(primals, duals)])
            tangent = fw.unpack_dual(out).tangent
        results.append(None if tangent is None else _numpy(tangent))
    ours, theirs = results
    assert (ours is None) == (theirs is None)
    if ours is not None:
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize('kwargs', [{}, {'equal_nan': True}, {'atol': 0.2}, {'rtol': 0.05}])
def test_isclose_compares_complex_values_whole(kwargs):
    """The imaginary parts count (they were once dropped, with NumPy's ComplexWarning)."""
    a = [1 + 1j, 1 + 2j, complex('nan'), 2 + 0j, complex(1, float('nan')), 3j]
    b = [1 + 1j, 1 + 2.1j, complex('nan'), 2 + 1e-9j, complex(1, float('nan')), -3j]
    expected = torch.isclose(torch.tensor(a), torch.tensor(b), **kwargs).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert dynagrad.isclose(dynagrad.tensor(a), dynagrad.tensor(b), **kwargs).tolist() == expected


def test_true_division_in_place_into_complex():
    """pytorch_optimizer's SGD variants divide complex state by real tensors in place."""
    z = np.array([1 + 2j, -3 + 0.5j], np.complex64)
    d = np.array([2.0, 4.0], np.float32)
    ours, theirs = dynagrad.tensor(z), torch.tensor(z)
    ours.div_(dynagrad.tensor(d))
    theirs.div_(torch.tensor(d))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    for m in (torch, dynagrad):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                               'output type Long'):
            m.ones(2, dtype=m.long).div_(2)


def test_sgn_in_place_on_complex():
    """pytorch_optimizer's Yogi calls (a - b).sgn_() on complex state."""
    z = np.array([3 + 4j, 0j, -2j, -1 + 1j], np.complex64)
    ours, theirs = dynagrad.tensor(z), torch.tensor(z)
    ours.sgn_()
    theirs.sgn_()
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    x, xt = dynagrad.tensor(z, requires_grad=True), torch.tensor(z, requires_grad=True)
    for v, m in ((x, dynagrad), (xt, torch)):
        y = v * 2
        y.sgn_()
        (y * m.tensor(z).conj()).real.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-7)
    with pytest.raises(RuntimeError, match='torch.sgn instead'):
        dynagrad.tensor(z).sign_()
