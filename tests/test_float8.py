"""The float8 dtypes (stored through ml_dtypes), against torch 2.13 on the CPU.

Values are compared bit for bit where torch's rounding matters; what torch refuses is
refused with its error type and a message containing torch's.
"""
import io
import platform

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import _dtype

pytest.importorskip('ml_dtypes')

NAMES = ('float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu')
ALL_BYTES = np.arange(256, dtype=np.uint8)


def bits(t):
    """A tensor's bytes as a NumPy uint8 array (either library)."""
    if isinstance(t, torch.Tensor):
        return t.contiguous().view(torch.uint8).numpy()
    return np.asarray(t._data).view(np.uint8)


def torch_of(name, raw):
    return torch.from_numpy(raw.copy()).view(getattr(torch, name))


@pytest.mark.parametrize('name', NAMES)
def test_dtype_attributes_as_torch(name):
    mine, theirs = getattr(dg, name), getattr(torch, name)
    assert repr(mine) == repr(theirs).replace('torch.', 'dynagrad.')
    assert mine.is_floating_point == theirs.is_floating_point
    assert mine.is_signed == theirs.is_signed
    assert mine.itemsize == theirs.itemsize
    t = dg.zeros(2, dtype=mine)
    assert t.dtype is mine and t.element_size() == 1 and t.is_floating_point()
    assert t.type() == torch.zeros(2, dtype=theirs).type().replace('torch.', 'dynagrad.')


@pytest.mark.parametrize('name', NAMES)
def test_finfo_as_torch(name):
    mine, theirs = dg.finfo(getattr(dg, name)), torch.finfo(getattr(torch, name))
    for field in ('bits', 'eps', 'max', 'min', 'tiny', 'smallest_normal', 'resolution'):
        assert getattr(mine, field) == getattr(theirs, field), field
    assert repr(mine) == repr(theirs)


def _sources():
    rng = np.random.default_rng(8)
    import ml_dtypes
    every16 = np.arange(65536, dtype=np.uint16)
    f32 = rng.integers(0, 2 ** 32, 50_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 1e300, -1e300, 5e-324,
                         448.0, 464.0, 464.1, 1.0625 + 2.0 ** -40, 1.5, 3.0, -3.0])
    return {'float16': every16.view(np.float16),
            'bfloat16': every16.view(ml_dtypes.bfloat16),
            'float32': f32,
            'float64': np.concatenate([specials, rng.standard_normal(20_000)
                                       * np.exp2(rng.integers(-140, 140, 20_000))]),
            'int64': np.concatenate([rng.integers(-2 ** 63, 2 ** 63 - 1, 5_000),
                                     np.arange(-1000, 1000)]),
            'bool': np.array([True, False])}


SOURCES = _sources()


def _torch_source(arr):
    if arr.dtype.name == 'bfloat16':
        return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(arr)


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('source', list(SOURCES))
def test_rounding_into_float8_is_torch_bit_for_bit(name, source):
    """Every float16 and bfloat16 value, random float32 bit patterns, float64 beyond float32's
    range and ties that round twice, int64 and bool: saturation, NaN's bits, e8m0's signs."""
    arr = SOURCES[source]
    expected = bits(_torch_source(arr).to(getattr(torch, name)))
    got = _dtype.to_float8(arr, getattr(dg, name)).view(np.uint8)
    np.testing.assert_array_equal(got, expected)


# PyTorch's conversions of NaN and infinities into integers are the CPU's; dynagrad computes
# x86-64's (see _dtype.float_to_integer). Elsewhere only finite values are compared.
X86 = platform.machine().lower() in ('x86_64', 'amd64')


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('target', ['float32', 'float64', 'float16', 'bfloat16', 'int64',
                                    'int32', 'int16', 'int8', 'uint8', 'uint16', 'uint32',
                                    'uint64', 'bool'])
def test_every_float8_value_converts_out_as_torch(name, target):
    theirs = torch_of(name, ALL_BYTES)
    wide = theirs.float()
    if target.startswith(('float', 'bfloat')):
        keep = ~torch.isnan(wide)      # NaN's payload is unspecified
    elif target == 'bool' or X86:
        keep = torch.ones(256, dtype=torch.bool)
    else:
        keep = torch.isfinite(wide)
    expected = theirs.to(getattr(torch, target))[keep]
    out = _wrap_bytes(name).to(getattr(dg, target))
    assert out.dtype is getattr(dg, target)
    assert out[dg.from_numpy(keep.numpy())].tolist() == expected.tolist()


def _wrap_bytes(name):
    """A dynagrad tensor holding all 256 byte patterns of float8 ``name``."""
    from dynagrad.tensor import wrap
    return wrap(ALL_BYTES.view(getattr(dg, name).numpy).copy())


@pytest.mark.parametrize('name', NAMES)
def test_in_range_values_convert_in_as_torch(name):
    values = [0.3, 1.0, 2.0, 1.5, 3.3, 0.0625, 7.0, 0.1, 12.0]
    for src in ('float32', 'float64', 'float16', 'bfloat16'):
        theirs = torch.tensor(values, dtype=getattr(torch, src)).to(getattr(torch, name))
        mine = dg.tensor(values, dtype=getattr(dg, src)).to(getattr(dg, name))
        assert mine.dtype is getattr(dg, name)
        np.testing.assert_array_equal(bits(mine), bits(theirs))


@pytest.mark.parametrize('name', ('float8_e4m3fn', 'float8_e8m0fnu'))
def test_out_of_range_values_convert_in_as_torch(name):
    values = [1000.0, -1e30, float('inf'), 0.0, -2.0]
    theirs = torch.tensor(values).to(getattr(torch, name))
    mine = dg.tensor(values).to(getattr(dg, name))
    np.testing.assert_array_equal(bits(mine), bits(theirs))


@pytest.mark.parametrize('name', NAMES)
def test_creation_as_torch(name):
    calls = {
        'zeros': lambda lib, d: lib.zeros(2, 3, dtype=d),
        'ones': lambda lib, d: lib.ones(2, dtype=d),
        'full': lambda lib, d: lib.full((2,), 3.3, dtype=d),
        'tensor': lambda lib, d: lib.tensor([1.0, 2.0, 0.3, -0.0], dtype=d),
        'tensor_ints': lambda lib, d: lib.tensor([1, 2, 7], dtype=d),
        'ones_like': lambda lib, d: lib.ones_like(lib.zeros(2), dtype=d),
        'full_like': lambda lib, d: lib.full_like(lib.zeros(2, dtype=d), 2),
        'empty': lambda lib, d: lib.empty(2, 3, dtype=d),
    }
    for call, fn in calls.items():
        mine, theirs = fn(dg, getattr(dg, name)), fn(torch, getattr(torch, name))
        assert mine.dtype is getattr(dg, name) and tuple(mine.shape) == tuple(theirs.shape)
        if call == 'empty':
            continue
        np.testing.assert_array_equal(bits(mine), bits(theirs), err_msg=call)


def test_e8m0_zeros_as_torch():
    np.testing.assert_array_equal(bits(dg.zeros(2, dtype=dg.float8_e8m0fnu)),
                                  bits(torch.zeros(2, dtype=torch.float8_e8m0fnu)))


REPR_CASES = [
    ('float8_e4m3fn', [1.0, 2.0]), ('float8_e4m3fn', [1e-3, 300.0]),
    ('float8_e4m3fn', [float('nan'), 2.0]), ('float8_e5m2', [[1.5, 3.0], [0.25, -2.0]]),
    ('float8_e5m2', 2.5), ('float8_e5m2fnuz', [2.0 ** -16, 3.0]),
    ('float8_e4m3fnuz', [0.3, -7.0]), ('float8_e8m0fnu', [2.0 ** 20, 2.0 ** -30, 1.0]),
    ('float8_e8m0fnu', [0.5, 4.0]),
]


@pytest.mark.parametrize('name,values', REPR_CASES)
def test_repr_as_torch(name, values):
    mine = repr(dg.tensor(values, dtype=getattr(dg, name)))
    assert mine == repr(torch.tensor(values, dtype=getattr(torch, name))).replace(
        'torch.', 'dynagrad.')


@pytest.mark.parametrize('raw', [[0x00, 0x7F], [0x00, 0x85], [0x00]])
def test_e8m0_smallest_value_prints_as_zero_as_torch(raw):
    raw = np.array(raw, dtype=np.uint8)
    from dynagrad.tensor import wrap
    mine = repr(wrap(raw.view(dg.float8_e8m0fnu.numpy).copy()))
    assert mine == repr(torch_of('float8_e8m0fnu', raw)).replace('torch.', 'dynagrad.')


@pytest.mark.parametrize('name', NAMES)
def test_empty_repr_as_torch(name):
    for shape in ((0,), (2, 0)):
        mine = repr(dg.zeros(shape, dtype=getattr(dg, name)))
        theirs = repr(torch.zeros(shape, dtype=getattr(torch, name)))
        assert mine == theirs.replace('torch.', 'dynagrad.')


OTHERS = ('bool', 'int64', 'uint8', 'uint16', 'float32', 'bfloat16', 'float16') + NAMES


def _promote(lib, a, b):
    try:
        return str(lib.promote_types(getattr(lib, a), getattr(lib, b))).split('.')[-1]
    except RuntimeError as e:
        return ('RuntimeError', str(e))


@pytest.mark.parametrize('name', NAMES)
def test_promotion_is_refused_as_torch(name):
    for other in OTHERS:
        for a, b in ((name, other), (other, name)):
            assert _promote(dg, a, b) == _promote(torch, a, b), (a, b)


@pytest.mark.parametrize('name', NAMES)
def test_result_type_as_torch(name):
    def cases(lib):
        d = getattr(lib, name)
        x, z = lib.ones(2, dtype=d), lib.tensor(1.0, dtype=d)
        return [(x, 2.0), (x, 2), (x, True), (x, lib.tensor(1.0)), (x, lib.tensor(1)),
                (z, 2.5), (lib.ones(2, dtype=lib.int64), z)]
    for (a, b), (ta, tb) in zip(cases(dg), cases(torch)):
        try:
            expected = str(torch.result_type(ta, tb)).split('.')[-1]
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match='Promotion for Float8 Types'):
                dg.result_type(a, b)
            assert 'Promotion for Float8 Types' in str(e)
            continue
        assert str(dg.result_type(a, b)).split('.')[-1] == expected


@pytest.mark.parametrize('name', NAMES)
def test_values_indexing_cat_copy_as_torch(name):
    def run(lib):
        d = getattr(lib, name)
        x = lib.tensor([[1.5, 3.0], [0.25, 8.0]], dtype=d)
        y = x.clone()
        y[0, 1] = 2.0
        out = {'item': x[0, 0].item(), 'tolist': x.tolist(), 'float': float(x[1, 1]),
               'row': bits(x[1]), 'setitem': bits(y), 'cat': bits(lib.cat([x, y])),
               'stack': bits(lib.stack([x, y])), 't': bits(x.t().contiguous()),
               'reshape': bits(x.reshape(4)),
               'copy_in': bits(lib.zeros(2, dtype=d).copy_(lib.tensor([1.3, 2.0]))),
               'copy_out': lib.zeros(2).copy_(x[0]).tolist(),
               'eq': (x == y).tolist(), 'ne': (x != y).tolist(), 'eq_scalar': (x == 8.0).tolist()}
        return out
    mine, theirs = run(dg), run(torch)
    for key in theirs:
        if isinstance(theirs[key], np.ndarray):
            np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)
        else:
            assert mine[key] == theirs[key], key


@pytest.mark.parametrize('name', NAMES)
def test_cat_with_another_dtype_is_refused_as_torch(name):
    with pytest.raises(RuntimeError) as theirs:
        torch.cat([torch.ones(2, dtype=getattr(torch, name)), torch.ones(1)])
    with pytest.raises(RuntimeError, match='Promotion for Float8 Types is not supported') as e:
        dg.cat([dg.ones(2, dtype=getattr(dg, name)), dg.ones(1)])
    assert str(e.value) == str(theirs.value)


@pytest.mark.parametrize('name', NAMES)
def test_checkpoints_round_trip_with_torch(name):
    raw = np.array([0x00, 0x01, 0x38, 0x7E, 0x80, 0xC0, 0x7F], dtype=np.uint8)
    theirs = torch_of(name, raw)
    buf = io.BytesIO()
    torch.save({'t': theirs}, buf)
    buf.seek(0)
    mine = dg.load(buf)['t']
    assert mine.dtype is getattr(dg, name)
    np.testing.assert_array_equal(bits(mine), raw)

    buf = io.BytesIO()
    dg.save({'t': mine}, buf)
    buf.seek(0)
    back = torch.load(buf)['t']
    assert back.dtype is getattr(torch, name)
    np.testing.assert_array_equal(bits(back), raw)


@pytest.mark.parametrize('name', ('float8_e4m3fn', 'float8_e5m2', 'float8_e8m0fnu'))
def test_safetensors_files_of_torch_load(name):
    save = pytest.importorskip('safetensors.torch').save
    raw = np.array([0x00, 0x38, 0x7E, 0x80], dtype=np.uint8)
    got = dg.load(io.BytesIO(save({'a': torch_of(name, raw)})))['a']
    assert got.dtype is getattr(dg, name)
    np.testing.assert_array_equal(bits(got), raw)


@pytest.mark.parametrize('name', NAMES)
def test_numpy_is_refused_as_torch(name):
    with pytest.raises(TypeError) as theirs:
        torch.ones(2, dtype=getattr(torch, name)).numpy()
    with pytest.raises(TypeError) as mine:
        dg.ones(2, dtype=getattr(dg, name)).numpy()
    assert str(mine.value) == str(theirs.value)


def lib_of(x):
    return torch if isinstance(x, torch.Tensor) else dg


@pytest.mark.parametrize('name', NAMES)
@pytest.mark.parametrize('call,kernel', [
    (lambda x: x + x, 'add_stub'), (lambda x: x - x, 'add_stub'), (lambda x: x / x, 'div_cpu'),
    (lambda x: -x, 'neg_cpu'), (lambda x: x.exp(), 'exp_vml_cpu'), (lambda x: x.sum(), 'sum_cpu'),
    (lambda x: x < x, 'lt_cpu'), (lambda x: 1 - x, 'add_stub'),
    (lambda x: x // x, 'div_floor_cpu'), (lambda x: x % x, 'remainder_cpu'),
    (lambda x: x ** 2, 'pow'), (lambda x: x.sign(), 'sign_cpu'), (lambda x: x >= 1, 'ge_cpu'),
    (lambda x: x.clamp(0, 1), 'clamp_scalar_cpu'),
    (lambda x: torch.maximum(x, x) if isinstance(x, torch.Tensor) else dg.maximum(x, x),
     'maximum_cpu'),
    # a Python number or 0-d operand (torch casts the number to float8, then refuses)
    (lambda x: x + 1.5, 'add_stub'), (lambda x: 1 + x, 'add_stub'), (lambda x: x - 1, 'add_stub'),
    (lambda x: x.clone().add_(1.5), 'add_stub'), (lambda x: x * 2, 'mul_cpu_reduced_float'),
    (lambda x: 2.5 * x, 'mul_cpu_reduced_float'), (lambda x: x * True, 'mul_cpu_reduced_float'),
    (lambda x: x.clone().mul_(2), 'mul_cpu_reduced_float'),
    (lambda x: x * x[0], 'mul_cpu_reduced_float'), (lambda x: x / 2, 'div_cpu_reduced_float'),
    (lambda x: x.clone().div_(2), 'div_cpu_reduced_float'), (lambda x: 2 / x, 'reciprocal_cpu'),
    # math kernels
    (lambda x: x.log(), 'log_vml_cpu'), (lambda x: x.sqrt(), 'sqrt_vml_cpu'),
    (lambda x: x.sin(), 'sin_vml_cpu'), (lambda x: x.cos(), 'cos_vml_cpu'),
    (lambda x: x.tanh(), 'tanh_vml_cpu'), (lambda x: x.sigmoid(), 'sigmoid_cpu_reduced_float'),
    (lambda x: x.floor(), 'floor_vml_cpu'), (lambda x: x.ceil(), 'ceil_vml_cpu'),
    (lambda x: x.round(), 'round_vml_cpu'), (lambda x: x.trunc(), 'trunc_vml_cpu'),
    (lambda x: x.reciprocal(), 'reciprocal_cpu'), (lambda x: x.relu(), 'clamp_min_scalar_cpu'),
    (lambda x: x.clone().relu_(), 'clamp_min_scalar_cpu'),
    # reductions
    (lambda x: x.prod(), 'prod_out_cpu'), (lambda x: x.prod(0), 'prod_out_cpu'),
    (lambda x: x.cumsum(0), 'cumsum_out_cpu'), (lambda x: x.cumprod(0), 'cumprod_out_cpu'),
    (lambda x: x.mean(), 'sum_cpu'), (lambda x: x.mean(0), 'sum_cpu'),
    (lambda x: x.max(), 'max_all'), (lambda x: x.min(), 'min_all'),
    (lambda x: x.max(0), 'max_cpu'), (lambda x: x.min(0), 'min_cpu'),
    (lambda x: x.amax(), 'max_values_cpu'), (lambda x: x.amin(), 'min_values_cpu'),
    (lambda x: x.argmax(), 'argmax_cpu'), (lambda x: x.argmin(0), 'argmin_cpu'),
    (lambda x: x.count_nonzero(), 'nonzero_count_cpu'),
    # products other than a matrix product
    (lambda x: x @ x, 'dot'), (lambda x: x.reshape(1, 2) @ x, 'addmv_impl_cpu'),
    (lambda x: x.reshape(1, 1, 2) @ x.reshape(1, 2, 1), 'bmm'),
    # sampling, creation, masks, indices, flips
    (lambda x: lib_of(x).rand_like(x), 'check_uniform_bounds'),
    (lambda x: lib_of(x).randn_like(x), 'normal_kernel_cpu'),
    (lambda x: lib_of(x).rand(2, dtype=x.dtype), 'check_uniform_bounds'),
    (lambda x: lib_of(x).randn(2, dtype=x.dtype), 'normal_kernel_cpu'),
    (lambda x: x.clone().uniform_(), 'check_uniform_bounds'),
    (lambda x: x.clone().normal_(), 'normal_kernel_cpu'),
    (lambda x: lib_of(x).arange(2, dtype=x.dtype), 'arange_cpu'),
    (lambda x: lib_of(x).linspace(0, 1, 2, dtype=x.dtype), 'linspace_cpu'),
    (lambda x: lib_of(x).logspace(0, 1, 2, dtype=x.dtype), 'logspace_cpu'),
    (lambda x: x.masked_fill(lib_of(x).tensor([True, False]), 0), 'masked_fill'),
    (lambda x: x.nonzero(), 'nonzero_count_cpu'), (lambda x: x.flip(0), 'flip_cpu')])
def test_kernels_refuse_as_torch(call, kernel, name):
    with pytest.raises(NotImplementedError) as theirs:
        call(torch.ones(2, dtype=getattr(torch, name)))
    message = str(theirs.value)
    assert f'"{kernel}" not implemented for \'' in message     # the premise
    with pytest.raises(NotImplementedError) as mine:
        call(dg.ones(2, dtype=getattr(dg, name)))
    assert message in str(mine.value)


@pytest.mark.parametrize('name', NAMES)
def test_two_float8_tensors_multiply_as_torch(name):
    values = [1.0, 2.0, 0.5]
    theirs = torch.tensor(values).to(getattr(torch, name)) * \
        torch.tensor(values[::-1]).to(getattr(torch, name))
    mine = dg.tensor(values).to(getattr(dg, name)) * dg.tensor(values[::-1]).to(getattr(dg, name))
    assert mine.dtype is getattr(dg, name)
    np.testing.assert_array_equal(bits(mine), bits(theirs))


@pytest.mark.parametrize('name', NAMES)
def test_abs_refuses_only_e8m0_as_torch(name):
    theirs_x = torch.tensor([1.0, 2.0]).to(getattr(torch, name))
    x = dg.tensor([1.0, 2.0]).to(getattr(dg, name))
    if name == 'float8_e8m0fnu':
        with pytest.raises(NotImplementedError) as theirs:
            theirs_x.abs()
        with pytest.raises(NotImplementedError) as mine:
            x.abs()
        assert str(theirs.value) in str(mine.value)
    else:
        np.testing.assert_array_equal(bits(x.abs()), bits(theirs_x.abs()))


@pytest.mark.parametrize('name', NAMES)
def test_matrix_product_as_torch(name):
    """torch multiplies float8 matrices (not e8m0), rounding the float sums to float8."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4, 6)) * 4, rng.standard_normal((6, 5)) * 4
    ta = torch.tensor(a, dtype=torch.float32).to(getattr(torch, name))
    tb = torch.tensor(b, dtype=torch.float32).to(getattr(torch, name))
    ma = dg.tensor(a, dtype=dg.float32).to(getattr(dg, name))
    mb = dg.tensor(b, dtype=dg.float32).to(getattr(dg, name))
    if name == 'float8_e8m0fnu':
        with pytest.raises(NotImplementedError) as theirs:
            ta @ tb
        with pytest.raises(NotImplementedError) as mine:
            ma @ mb
        assert str(theirs.value) in str(mine.value)
        return
    for mine, theirs in ((ma @ mb, ta @ tb), (ma[0] @ mb, ta[0] @ tb),
                         (ma[0, 0] @ mb, ta[0, 0] @ tb)):
        assert mine.dtype is getattr(dg, name)
        np.testing.assert_array_equal(bits(mine), bits(theirs))


@pytest.mark.parametrize('name', NAMES)
def test_still_computed_as_torch(name):
    """What torch computes on float8 although the kernels above refuse it."""
    for call in (lambda lib, d: lib.eye(2, 3, dtype=d),
                 lambda lib, d: lib.tensor([[1.0, 2.0], [4.0, 8.0]]).to(d).flip(0),
                 lambda lib, d: lib.tensor([[1.0, 2.0], [4.0, 8.0]]).to(d).rot90(3),
                 lambda lib, d: lib.tensor([1.0, 2.0]).to(d).flip(()),
                 lambda lib, d: lib.tensor([1.0, 2.0]).to(d).sum(dtype=lib.float32),
                 lambda lib, d: lib.tensor([1.0, 2.0]).to(d).prod(dtype=lib.float32),
                 lambda lib, d: lib.tensor([1.0, 2.0]).to(d).mean(dtype=lib.float32)):
        mine, theirs = call(dg, getattr(dg, name)), call(torch, getattr(torch, name))
        assert str(mine.dtype).split('.')[-1] == str(theirs.dtype).split('.')[-1]
        assert mine.float().tolist() == theirs.float().tolist()     # float8 -> float is exact
