"""complex64 and complex128 tensors: dtypes and promotion, construction, printing, the views
of their parts sharing memory, conjugation, and the errors PyTorch gives (torch is the
oracle). The ops' values and gradients are in tests/ops/test_complex_ops.py."""
import numpy as np
import pytest

import dynagrad

torch = pytest.importorskip('torch')

DTYPES = ['float16', 'bfloat16', 'float32', 'float64', 'int64', 'int32', 'uint8', 'bool',
          'complex64', 'complex128']


def _name(d):
    return str(d).split('.')[-1]


@pytest.mark.parametrize('b', DTYPES)
@pytest.mark.parametrize('a', ['complex64', 'complex128'])
def test_promote_types_matches_torch(a, b):
    ours = dynagrad.promote_types(getattr(dynagrad, a), getattr(dynagrad, b))
    assert _name(ours) == _name(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize('expr', [
    'lib.ones(2) * 1j', 'lib.ones(2, dtype=lib.float64) * 1j', 'lib.ones(2, dtype=lib.int64) * 1j',
    'lib.ones(2) + lib.tensor(1j)', 'lib.ones(2, dtype=lib.float64) * lib.tensor([1j, 2j])',
    'lib.tensor([1j, 2j]) * 2.5', 'lib.tensor([1j], dtype=lib.complex128) + lib.ones(1)',
    'lib.tensor([1, 2j])', 'lib.tensor([[1.5, 2], [1j, 0]])', 'lib.tensor(1 + 0j)',
    'lib.zeros(2, dtype=lib.cdouble)', 'lib.full((2,), 1 - 1j)', 'lib.ones(2, dtype=lib.cfloat).to(lib.complex128)',
    'lib.tensor([1 + 2j]).sum()', 'lib.tensor([3 + 4j]).abs()', 'lib.tensor([3 + 4j]).angle()',
])
def test_result_dtype_and_value_match_torch(expr):
    ours, theirs = eval(expr, {'lib': dynagrad}), eval(expr, {'lib': torch})
    assert _name(ours.dtype) == _name(theirs.dtype)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_dtype_properties_and_finfo():
    assert dynagrad.complex64.is_complex and not dynagrad.float32.is_complex
    assert dynagrad.cfloat is dynagrad.complex64 and dynagrad.cdouble is dynagrad.complex128
    assert dynagrad.complex64.to_real() is dynagrad.float32
    assert dynagrad.float64.to_complex() is dynagrad.complex128
    assert str(dynagrad.finfo(dynagrad.complex128)) == str(torch.finfo(torch.complex128))
    x = dynagrad.tensor([1 + 2j])
    assert x.is_complex() and dynagrad.is_complex(x) and not x.is_floating_point()
    assert x.type() == 'dynagrad.ComplexFloatTensor'
    assert x.to(dynagrad.complex128).type() == 'dynagrad.ComplexDoubleTensor'


CASES = [
    lambda lib: lib.tensor([1 + 2j, 3 - 1j]),
    lambda lib: lib.tensor([[1.5 + 2j, -3 - 1.25j], [0j, 1e-5 + 1j]]),
    lambda lib: lib.tensor(np.array([1 + 1j, 2 + 3j], dtype=np.complex128)),
    lambda lib: lib.tensor(np.random.default_rng(0).standard_normal((3, 4))
                           + 1j * np.random.default_rng(1).standard_normal((3, 4))),
    lambda lib: lib.tensor(1 + 0j),
    lambda lib: lib.tensor([1e10 + 1j, 1 - 1e-3j]),
    lambda lib: lib.tensor(np.random.default_rng(0).standard_normal(200)
                           + 1j * np.random.default_rng(1).standard_normal(200),
                           dtype=lib.complex64),
    lambda lib: lib.zeros(2, 0, dtype=lib.complex64),
    lambda lib: lib.tensor([float('nan') + 1j, complex(0, float('inf'))]),
    lambda lib: lib.tensor([1 + 2j], requires_grad=True) * 2,
]


@pytest.mark.parametrize('case', range(len(CASES)))
def test_repr_matches_torch(case):
    ours, theirs = CASES[case](dynagrad), CASES[case](torch)
    assert repr(ours) == repr(theirs).replace('torch.', 'dynagrad.')


def test_parts_are_views_sharing_memory():
    for lib in (dynagrad, torch):
        z = lib.tensor([1 + 2j, 3 - 1j])
        z.real.add_(10)
        z.imag.mul_(2)
        r = lib.view_as_real(z)
        r[0, 1] = -7
        assert z.tolist() == [11 - 7j, 13 - 2j]
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        c = lib.view_as_complex(x)
        c.mul_(1j)
        assert x.tolist() == [[-2.0, 1.0], [-4.0, 3.0]]
        z.real = lib.tensor([0.0, 1.0])
        assert z.tolist() == [-7j, 1 - 2j]


def test_real_of_a_real_tensor_is_itself_and_imag_refuses():
    x = dynagrad.ones(2)
    assert x.real is x and dynagrad.real(x) is x
    with pytest.raises(RuntimeError, match='imag is not implemented for tensors with '
                                           'non-complex dtypes'):
        x.imag


def test_conj_is_flagged_and_resolves():
    z = dynagrad.tensor([1 + 2j], requires_grad=True)
    c = z.conj()
    assert c.is_conj() and not z.is_conj() and not c.conj().is_conj()
    assert type(c.grad_fn).__name__ == 'ConjBackward0'
    r = c.resolve_conj()
    assert not r.is_conj() and type(r.grad_fn).__name__ == 'CloneBackward0'
    assert r.tolist() == [1 - 2j]
    assert z.conj_physical().tolist() == [1 - 2j] and not z.conj_physical().is_conj()
    real = dynagrad.ones(2)
    assert real.conj() is real and not real.conj().is_conj()
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved "
                                           'conjugated tensors'):
        dynagrad.view_as_real(c)
    with pytest.raises(RuntimeError, match='cannot write into the result of conj'):
        z.detach().conj().add_(1)


def test_backward_of_a_complex_scalar_is_refused():
    z = dynagrad.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match='grad can be implicitly created only for real '
                                           'scalar outputs but got dynagrad.complex64'):
        (z * z).sum().backward()
    (z * z).abs().sum().backward()      # a real loss is fine
    t = torch.tensor([1 + 2j], requires_grad=True)
    (t * t).abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_real_leaf_gets_the_real_part_of_a_complex_gradient():
    for lib in (dynagrad, torch):
        w = lib.ones(2, requires_grad=True)
        (w * (1 + 1j)).abs().sum().backward()
        assert _name(w.grad.dtype) == 'float32'
        np.testing.assert_allclose(w.grad.numpy(), [2 ** 0.5] * 2, rtol=1e-6)


def test_casting_to_real_warns_and_keeps_the_real_part():
    z = dynagrad.tensor([1 + 2j], requires_grad=True)
    with pytest.warns(UserWarning, match='Casting complex values to real discards the '
                                         'imaginary part'):
        x = z.to(dynagrad.float32)
    assert x.tolist() == [1.0]
    x.sum().backward()
    assert z.grad.tolist() == [1 + 0j]


ERRORS = [
    ('lt', lambda lib, z: z < z),
    ('clamp', lambda lib, z: z.clamp(0, 1)),
    ('relu', lambda lib, z: lib.relu(z)),
    ('max', lambda lib, z: z.max()),
    ('amax', lambda lib, z: z.amax()),
    ('argmax', lambda lib, z: z.argmax()),
    ('sort', lambda lib, z: lib.sort(z)),
    ('argsort', lambda lib, z: lib.argsort(z)),
    ('maximum', lambda lib, z: lib.maximum(z, z)),
    ('floor', lambda lib, z: z.floor()),
    ('round', lambda lib, z: z.round()),
    ('sign', lambda lib, z: z.sign()),
    ('erf', lambda lib, z: lib.erf(z)),
    ('lgamma', lambda lib, z: lib.lgamma(z)),
    ('remainder', lambda lib, z: z % 2),
    ('atan2', lambda lib, z: lib.atan2(z, z)),
    ('abs_', lambda lib, z: z.abs_()),
    ('view_as_real_of_real', lambda lib, z: lib.view_as_real(z.real)),
    ('view_as_complex_size', lambda lib, z: lib.view_as_complex(lib.ones(3, 3))),
    ('view_as_complex_stride', lambda lib, z: lib.view_as_complex(lib.ones(2, 3).t())),
    ('view_as_complex_dtype', lambda lib, z: lib.view_as_complex(lib.ones(3, 2, dtype=lib.int64))),
    ('complex_mixed', lambda lib, z: lib.complex(lib.ones(2), lib.ones(2, dtype=lib.float64))),
    ('complex_int', lambda lib, z: lib.complex(lib.ones(2, dtype=lib.int64),
                                                lib.ones(2, dtype=lib.int64))),
    ('matmul_mixed', lambda lib, z: lib.ones(2, 2) @ z.reshape(2, 1)),
    ('real_requires_int', lambda lib, z: lib.ones(2, dtype=lib.int64).requires_grad_()),
]


@pytest.mark.parametrize('name,fn', ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn):
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.tensor([1 + 2j, 3 - 1j]))
    with pytest.raises(type(theirs.value)) as ours:
        fn(dynagrad, dynagrad.tensor([1 + 2j, 3 - 1j]))
    expected = str(theirs.value).split(' (Triggered')[0].strip().replace('torch.', '')
    got = str(ours.value).replace('dynagrad.', '').replace('torch.', '')
    # the searchable part of PyTorch's message (dynagrad may add what to do); a kernel's
    # "not implemented for 'ComplexFloat'" names PyTorch's kernel, which dynagrad has not
    refusal = "not implemented for 'ComplexFloat'"
    assert expected[:40] in got or (refusal in expected and refusal in got), (got, expected)


def test_requires_grad_on_complex_factories():
    z = dynagrad.zeros(2, dtype=dynagrad.complex64, requires_grad=True)
    assert z.requires_grad and z.dtype is dynagrad.complex64


def test_randn_complex_splits_the_variance_as_torch():
    dynagrad.manual_seed(0)
    z = dynagrad.randn(20000, dtype=dynagrad.complex128)
    assert z.dtype is dynagrad.complex128
    # torch: real and imaginary parts are independent normals of variance 1/2 each
    assert abs(z.real.var().item() - 0.5) < 0.03 and abs(z.imag.var().item() - 0.5) < 0.03
