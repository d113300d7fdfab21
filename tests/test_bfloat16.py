"""bfloat16: the dtype, its promotion, printing, conversions, finfo, and every op of the
conformance table forward and backward, against torch; and ml_dtypes as an optional
dependency (imported on first use, a clear error without it)."""
import pickle
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest
import torch

import dynagrad as dg
import low_precision as lp
from op_db import OP_BY_NAME

NAMES = ('float16', 'bfloat16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64',
         'uint8', 'bool')


def same_repr(d, t):
    assert repr(d) == repr(t).replace('torch.', 'dynagrad.')


def run_python(code):
    out = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


# -- the dtype object ---------------------------------------------------------------------

def test_dtype_attributes_match_torch():
    d, t = dg.bfloat16, torch.bfloat16
    same_repr(d, t)
    assert str(d) == 'dynagrad.bfloat16'
    assert d.is_floating_point and not d.is_complex and d.is_signed
    assert d.itemsize == t.itemsize == 2
    assert d.to_real() is d
    assert isinstance(d, dg.dtype)
    assert pickle.loads(pickle.dumps(d)) is d
    assert d != dg.float16 and d is not dg.half


@pytest.mark.parametrize('other', NAMES)
def test_promote_types_with_every_dtype_as_torch(other):
    for a, b in ((dg.bfloat16, getattr(dg, other)), (getattr(dg, other), dg.bfloat16)):
        ta, tb = getattr(torch, str(a)[9:]), getattr(torch, str(b)[9:])
        same_repr(dg.promote_types(a, b), torch.promote_types(ta, tb))


@pytest.mark.parametrize('other,kind', [(o, k) for o in NAMES for k in ('dim', 'zero')]
                         + [(s, 'scalar') for s in (2.5, 3, True)])
def test_binary_result_dtype_as_torch(other, kind):
    results = []
    for lib in (dg, torch):
        x = lib.tensor([1.5, -2.25], dtype=lib.bfloat16)
        if kind == 'scalar':
            y = other
        else:
            v = True if other == 'bool' else 3
            y = lib.tensor([v, v] if kind == 'dim' else v, dtype=getattr(lib, other))
        results.append(((x + y).dtype, (y * x).dtype))
    for d, t in zip(*results):
        same_repr(d, t)


def test_zero_dim_bfloat16_yields_to_dimensioned_tensors():
    for lib in (dg, torch):
        z = lib.tensor(2.0, dtype=lib.bfloat16)
        assert str((lib.ones(2) * z).dtype).endswith('float32')
        assert str((lib.ones(2, dtype=lib.bfloat16) * lib.tensor(2.0)).dtype).endswith('bfloat16')
        assert str((lib.ones(2, dtype=lib.int64) * z).dtype).endswith('bfloat16')


def test_operands_round_to_bfloat16_before_the_op_as_torch():
    # PyTorch casts a Python number (and an integer tensor) to the result dtype first:
    # x * 1.001 is x in bfloat16, and 257 is 256
    vals = np.array([1.0, 2.0, 3.3, -7.1], np.float32)
    d, t = dg.tensor(vals).bfloat16(), torch.tensor(vals).bfloat16()
    cases = [lambda x, lib: x * 1.001, lambda x, lib: x + 0.001,
             lambda x, lib: x + lib.tensor([257, 1, 2, 3]), lambda x, lib: x / 3,
             lambda x, lib: x ** 1.7, lambda x, lib: 1 - x,
             lambda x, lib: x + lib.tensor(1.001)]
    for case in cases:
        np.testing.assert_array_equal(case(d, dg).float().numpy(), case(t, torch).float().numpy())


def test_mul_and_div_read_a_scalar_second_operand_in_float32_as_torch():
    # PyTorch's mul/div kernels read a CPU scalar (a number or a 0-d tensor) as float against
    # bfloat16: x * 0.997 keeps 0.30078125, where 0.997 rounded first (0.99609375) moves it
    vals = np.array([0.30078125, 1.0078125, 3.3, 0.1, 7.77, -2.5], np.float32)
    d, t = dg.tensor(vals).bfloat16(), torch.tensor(vals).bfloat16()
    cases = [lambda x, lib: x * 0.997, lambda x, lib: 0.997 * x, lambda x, lib: x / 0.997,
             lambda x, lib: x * lib.tensor(0.997), lambda x, lib: x / lib.tensor(0.997),
             lambda x, lib: x * lib.tensor(0.997, dtype=lib.float64),
             lambda x, lib: x.clone().mul_(0.997), lambda x, lib: x.clone().div_(0.997),
             lambda x, lib: x * lib.tensor([0.997]), lambda x, lib: x * 0.3333 / 2.7]
    for case in cases:
        np.testing.assert_array_equal(case(d, dg).float().numpy(), case(t, torch).float().numpy())


# -- printing ---------------------------------------------------------------------------------

PRINT_CASES = [
    [1.0, 2.0, 3.3],
    [1e-5, 300.0, 1.0],
    [[1.0, 2.0], [3.0, 4.0]],
    2.5,
    [0.1, -0.25, float('nan'), float('inf')],
    [123456.0, 1.0],
    [],
]


@pytest.mark.parametrize('values', PRINT_CASES, ids=range(len(PRINT_CASES)))
def test_repr_as_torch(values):
    d = dg.tensor(values, dtype=dg.bfloat16)
    t = torch.tensor(values, dtype=torch.bfloat16)
    assert repr(d) == repr(t).replace('torch.', 'dynagrad.')


def test_repr_with_grad_and_summarised():
    d = dg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=dg.bfloat16, requires_grad=True)
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.bfloat16, requires_grad=True)
    assert repr(d) == repr(t).replace('torch.', 'dynagrad.')
    assert repr(d * 2) == repr(t * 2).replace('torch.', 'dynagrad.')
    big = np.linspace(-3, 3, 2000, dtype=np.float32)
    assert repr(dg.tensor(big).bfloat16()) == repr(torch.tensor(big).bfloat16()).replace(
        'torch.', 'dynagrad.')


def test_legacy_type_names():
    d = dg.tensor([1.0], dtype=dg.bfloat16)
    assert d.type() == 'dynagrad.BFloat16Tensor'
    assert torch.tensor([1.0], dtype=torch.bfloat16).type() == 'torch.BFloat16Tensor'
    assert dg.tensor([1.0]).type('dynagrad.BFloat16Tensor').dtype is dg.bfloat16


# -- conversions -------------------------------------------------------------------------

@pytest.mark.filterwarnings('ignore:To copy construct')
def test_conversions_as_torch():
    vals = [1.1, -2.7, 3.14159, 1e4 + 1, 0.3]
    d, t = dg.tensor(vals), torch.tensor(vals)
    for conv in (lambda x, lib: x.to(lib.bfloat16), lambda x, lib: x.bfloat16(),
                 lambda x, lib: x.bfloat16().half(), lambda x, lib: x.bfloat16().float(),
                 lambda x, lib: x.bfloat16().double(), lambda x, lib: x.bfloat16().long(),
                 lambda x, lib: x.bfloat16().to(lib.int32), lambda x, lib: x.half().bfloat16(),
                 lambda x, lib: x.bfloat16().bool(),
                 lambda x, lib: lib.tensor(vals, dtype=lib.bfloat16),
                 lambda x, lib: lib.tensor(x, dtype=lib.bfloat16)):
        a, b = conv(d, dg), conv(t, torch)
        assert str(a.dtype)[9:] == str(b.dtype)[6:]
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())
    assert d.bfloat16().tolist() == t.bfloat16().tolist()
    assert d.bfloat16()[2].item() == t.bfloat16()[2].item()
    assert dg.tensor(1.1, dtype=dg.bfloat16).is_floating_point()


def test_numpy_refuses_bfloat16_as_torch():
    x = dg.tensor([1.0], dtype=dg.bfloat16)
    with pytest.raises(TypeError, match='Got unsupported ScalarType BFloat16'):
        x.numpy()
    with pytest.raises(TypeError, match='Got unsupported ScalarType BFloat16'):
        torch.tensor([1.0], dtype=torch.bfloat16).numpy()
    with pytest.raises(TypeError, match='Got unsupported ScalarType BFloat16'):
        np.asarray(x)
    np.testing.assert_array_equal(x.float().numpy(), [1.0])


def test_an_ml_dtypes_array_becomes_a_bfloat16_tensor():
    a = np.array([1.5, 2.0], dtype=ml_dtypes.bfloat16)
    for make in (dg.from_numpy, dg.tensor, dg.as_tensor):
        t = make(a)
        assert t.dtype is dg.bfloat16
        assert t.tolist() == [1.5, 2.0]


FACTORIES = [
    ('zeros', lambda lib: lib.zeros(2, 3, dtype=lib.bfloat16)),
    ('ones', lambda lib: lib.ones(4, dtype=lib.bfloat16)),
    ('full', lambda lib: lib.full((2,), 3.3, dtype=lib.bfloat16)),
    ('arange', lambda lib: lib.arange(0, 1, 0.1, dtype=lib.bfloat16)),
    ('linspace', lambda lib: lib.linspace(-1, 1, 7, dtype=lib.bfloat16)),
    ('eye', lambda lib: lib.eye(3, dtype=lib.bfloat16)),
    ('zeros_like', lambda lib: lib.zeros_like(lib.ones(2, dtype=lib.bfloat16))),
    ('new_full', lambda lib: lib.ones(2, dtype=lib.bfloat16).new_full((3,), 2.7)),
]


@pytest.mark.parametrize('name,make', FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_as_torch(name, make):
    d, t = make(dg), make(torch)
    assert d.dtype is dg.bfloat16 and t.dtype is torch.bfloat16
    np.testing.assert_array_equal(d.float().numpy(), t.float().numpy())


def test_random_factories_give_bfloat16():
    for make in (lambda: dg.randn(5, dtype=dg.bfloat16), lambda: dg.rand(5, dtype=dg.bfloat16),
                 lambda: dg.empty(3, dtype=dg.bfloat16).normal_(),
                 lambda: dg.empty(3, dtype=dg.bfloat16).uniform_(-1, 1)):
        x = make()
        assert x.dtype is dg.bfloat16
        assert np.isfinite(x.float().numpy()).all()
    with pytest.raises(RuntimeError, match='value cannot be converted to type'):
        dg.full((2,), 1e39, dtype=dg.bfloat16)
    with pytest.raises(RuntimeError, match='value cannot be converted to type'):
        torch.full((2,), 1e39, dtype=torch.bfloat16)


# -- finfo and iinfo -----------------------------------------------------------------------

@pytest.mark.parametrize('name', ['bfloat16', 'float16', 'float32', 'float64'])
def test_finfo_as_torch(name):
    d, t = dg.finfo(getattr(dg, name)), torch.finfo(getattr(torch, name))
    for attr in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution', 'dtype'):
        assert getattr(d, attr) == getattr(t, attr), attr
    assert repr(d) == repr(t)
    assert repr(dg.finfo()) == repr(torch.finfo())


@pytest.mark.parametrize('name', ['int8', 'int16', 'int32', 'int64', 'uint8'])
def test_iinfo_as_torch(name):
    d, t = dg.iinfo(getattr(dg, name)), torch.iinfo(getattr(torch, name))
    assert (d.bits, d.min, d.max, d.dtype) == (t.bits, t.min, t.max, t.dtype)
    assert repr(d) == repr(t)


def test_finfo_and_iinfo_errors_as_torch():
    with pytest.raises(TypeError, match=r'finfo\(\) requires a floating point input type'):
        dg.finfo(dg.int32)
    with pytest.raises(TypeError, match=r'iinfo\(\) requires an integer input type'):
        dg.iinfo(dg.bfloat16)
    with pytest.raises(TypeError, match='bool is not supported by'):
        dg.iinfo(dg.bool)
    with pytest.raises(TypeError, match=r'finfo\(\) requires a floating point input type'):
        torch.finfo(torch.int32)


# -- autograd --------------------------------------------------------------------------------

def test_gradients_are_bfloat16_and_match_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    w = (rng.standard_normal((5, 8)) * 0.3).astype(np.float32)
    y = rng.integers(0, 5, 6)
    grads = {}
    for lib in (dg, torch):
        F = lib.nn.functional
        xt = lib.tensor(x).bfloat16().requires_grad_()
        wt = lib.tensor(w).bfloat16().requires_grad_()
        h = F.layer_norm(F.gelu(xt * 1.5 + 0.25), (8,))
        logits = F.linear(h.tanh(), wt) + h.sum(1, keepdim=True).exp() * 0.01
        loss = F.cross_entropy(logits, lib.tensor(y)) + F.softmax(logits, 1).mean()
        loss.backward()
        grads[lib] = (loss, xt.grad, wt.grad)
    for d, t in zip(grads[dg], grads[torch]):
        assert d.dtype is dg.bfloat16
        np.testing.assert_allclose(d.detach().float().numpy(), t.detach().float().numpy(),
                                   rtol=3e-2, atol=1e-2)


def test_grad_fn_names_are_torchs():
    x = dg.tensor([1.0, 2.0], dtype=dg.bfloat16, requires_grad=True)
    t = torch.tensor([1.0, 2.0], dtype=torch.bfloat16, requires_grad=True)
    for f in (lambda a: a * 2, lambda a: a.exp(), lambda a: a.sum(), lambda a: a.relu(),
              lambda a: a.float()):
        assert type(f(x).grad_fn).__name__ == type(f(t).grad_fn).__name__


def test_optimizer_steps_on_bfloat16_parameters():
    w0 = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    out = {}
    for lib in (dg, torch):
        w = lib.tensor(w0).bfloat16().requires_grad_()
        opt = lib.optim.SGD([w], lr=0.05, momentum=0.9)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        out[lib] = w
    assert out[dg].dtype is dg.bfloat16
    np.testing.assert_allclose(out[dg].detach().float().numpy(),      # within one ulp
                               out[torch].detach().float().numpy(), rtol=8e-3)


# -- the op table ---------------------------------------------------------------------------

KNOWN = {
    # torch's bfloat16 matrix_exp overflows (inf where the exponential is below 1): it runs
    # its Taylor/Pade steps in bfloat16; dynagrad computes in float32, rounds once
    'linalg.matrix_exp': ('3x3', 'batched', '1x1'),
    # torch's CPU grouped_mm needs 16-byte strides (8 half-precision elements) and refuses
    # these widths; dynagrad computes any width
    'nn.functional.grouped_mm': ('3d_3d', '2d_3d', '2d_3d_empty_group', '3d_2d', '2d_2d'),
    # torch rounds interpolation weights and products to bfloat16 at each step; dynagrad
    # interpolates in float32 and rounds the result once (toplevel.grid_sampler[reflection]:
    # a rounded coordinate lands across a reflection edge, flipping the grid's gradient)
    'nn.functional.grid_sample': ('bilinear_zeros_noac', 'bilinear_zeros_ac',
                                  'bilinear_border_noac', 'bilinear_reflection_noac',
                                  'bilinear_reflection_ac', 'reflection_far',
                                  '3d_bilinear_zeros_noac', '3d_bilinear_zeros_ac',
                                  '3d_bilinear_border_noac', '3d_bilinear_reflection_noac',
                                  '3d_bilinear_reflection_ac',
                                  # the bfloat16-rounded coordinate picks the other neighbour
                                  '3d_nearest_border_ac', '3d_nearest_reflection_noac',
                                  # bicubic: the same per-step rounding, over 16 taps
                                  'bicubic_zeros_noac', 'bicubic_zeros_ac',
                                  'bicubic_border_noac', 'bicubic_border_ac',
                                  'bicubic_reflection_noac', 'bicubic_reflection_ac',
                                  'bicubic_reflection_far', 'bicubic_tiny'),
    'toplevel.grid_sampler': ('reflection',),
    'toplevel.grid_sampler_2d': ('bilinear',),
    'bilinear': ('2d_no_bias',),
    # torch's float32 -> bfloat16 cast turns NaN into 0xFFFF (sign bit set); dynagrad's keeps
    # the sign of the float32 NaN, and signbit reads that bit
    'signbit': ('special',),
    # torch's ||x||^2 + ||y||^2 - 2 x.y cancels in bfloat16; dynagrad's float32 does not
    'cdist': ('mm_path',),
    # torch raises for these inputs in bfloat16; dynagrad computes them
    'nn.functional.affine_grid': ('height1', '3d_size1'),
    'nn.functional.local_response_norm': ('4d',),
    'nn.functional.embedding_bag': ('per_sample_weights', '2d_per_sample_weights'),
    'nn.functional.embedding_bag_scale_grad_by_freq': ('per_sample_weights',),
    # torch's CPU avg_pool3d has no bfloat16 kernel (NotImplementedError); lp_pool3d is on it
    'nn.functional.avg_pool3d': ('k2_fast_path', 'small_overlap', 'small_pad',
                                 'small_exclude_pad', 'ceil_exclude_pad', 'unbatched_divisor',
                                 'noncontig_T'),
    'nn.functional.lp_pool3d': ('p2_k2', 'small_p3', 'p1.5_ceil'),
}

OPS = lp.ops_with_samples()


@pytest.mark.parametrize('op', OPS, ids=[op.name for op in OPS])
def test_op_table_in_bfloat16(op):
    lp.check_op(op, 'bfloat16', KNOWN.get(op.name, ()))


@pytest.mark.parametrize('name,desc', [(n, d) for n, ds in KNOWN.items() for d in ds])
def test_known_differences_still_differ(name, desc):
    assert lp.still_differs(OP_BY_NAME[name], desc, 'bfloat16')


# -- ml_dtypes is optional and lazy ---------------------------------------------------------------

def test_import_does_not_load_ml_dtypes():
    out = run_python('''
        import sys
        import dynagrad
        d = dynagrad.bfloat16
        print('ml_dtypes' in sys.modules, repr(d), d.itemsize, dynagrad.finfo(d).eps,
              dynagrad.promote_types(d, dynagrad.float16))
        dynagrad.zeros(1, dtype=d)
        print('ml_dtypes' in sys.modules)
    ''')
    assert out.split() == ['False', 'dynagrad.bfloat16', '2', '0.0078125', 'dynagrad.float32',
                           'True']


def test_without_ml_dtypes_a_bfloat16_tensor_is_a_clear_error():
    out = run_python('''
        import sys
        sys.modules['ml_dtypes'] = None           # as if not installed
        import dynagrad
        print(repr(dynagrad.bfloat16), dynagrad.bfloat16.is_floating_point)
        for make in (lambda: dynagrad.zeros(2, dtype=dynagrad.bfloat16),
                     lambda: dynagrad.ones(2).to(dynagrad.bfloat16),
                     lambda: dynagrad.ones(2).bfloat16(),
                     lambda: dynagrad.tensor([1.0], dtype=dynagrad.bfloat16)):
            try:
                make()
            except ImportError as e:
                print(type(e).__name__, 'pip install ml_dtypes' in str(e),
                      'dynagrad[bfloat16]' in str(e))
        print((dynagrad.ones(2) * 2).tolist())    # everything else still works
    ''')
    lines = out.strip().splitlines()
    assert lines[0] == 'dynagrad.bfloat16 True'
    assert lines[1:5] == ['MissingDependencyError True True'] * 4
    assert lines[5] == '[2.0, 2.0]'
