"""uint16, uint32, uint64 (PyTorch's "limited support") and hash_tensor, against torch.

Each case runs the same code on both libraries: what torch computes must come out equal
(dtype, shape, values); what torch refuses must be refused with its error type and a message
containing torch's.
"""
import io

import numpy as np
import pytest
import torch

import dynagrad as dg

UNSIGNED = ('uint16', 'uint32', 'uint64')
MAX = {'uint16': 2 ** 16 - 1, 'uint32': 2 ** 32 - 1, 'uint64': 2 ** 64 - 1}


def dtype_of(lib, name):
    # dynagrad/__init__.py exports the three from _dtype once the lead adds them there;
    # test_exported_at_top_level checks that separately.
    if lib is dg and not hasattr(dg, name):
        from dynagrad import _dtype
        return getattr(_dtype, name)
    return getattr(lib, name)


@pytest.mark.parametrize('name', UNSIGNED)
def test_exported_at_top_level(name):
    assert getattr(dg, name) is dtype_of(dg, name)


def dname(d):
    return str(d).replace('torch.', '').replace('dynagrad.', '')


def outcome(fn, lib, name):
    """What ``fn(lib, dtype)`` gives, in a form comparable across the two libraries."""
    try:
        r = fn(lib, dtype_of(lib, name))
    except Exception as e:  # noqa: BLE001 - the failure is what is compared
        return ('raises', type(e).__name__, str(e).replace('torch.', 'dynagrad.'))
    return _plain(r)


def _plain(r):
    if isinstance(r, (torch.Tensor, dg.Tensor)):
        return ('tensor', dname(r.dtype), tuple(r.shape), r.tolist())
    if isinstance(r, (tuple, list)):
        return tuple(_plain(x) for x in r)
    if isinstance(r, (torch.dtype, dg.dtype)):
        return ('dtype', dname(r))
    if isinstance(r, str):
        return r.replace('torch.', '').replace('dynagrad.', '')
    return ('value', type(r).__name__, r)


def assert_same(fn, name):
    got, want = outcome(fn, dg, name), outcome(fn, torch, name)
    if want[0] == 'raises':
        assert got[:2] == want[:2], (got, want)
        assert want[2] in got[2], (got, want)
    else:
        assert got == want


def T(lib, d, values=(3, 1, 2)):
    return lib.tensor(list(values), dtype=d)


# -- the dtype objects ------------------------------------------------------------------------

@pytest.mark.parametrize('name', UNSIGNED)
def test_dtype_attributes_match_torch(name):
    d, td = dtype_of(dg, name), dtype_of(torch, name)
    assert repr(d) == repr(td).replace('torch.', 'dynagrad.')
    assert (d.is_floating_point, d.is_signed, d.is_complex, d.itemsize) == \
        (td.is_floating_point, td.is_signed, td.is_complex, td.itemsize)
    assert repr(dg.iinfo(d)) == repr(torch.iinfo(td))
    assert (dg.iinfo(d).min, dg.iinfo(d).max, dg.iinfo(d).bits) == \
        (torch.iinfo(td).min, torch.iinfo(td).max, torch.iinfo(td).bits)
    import pickle
    assert pickle.loads(pickle.dumps(d)) is d


# -- what works: creation, printing, conversion, a few ops ------------------------------------

WORKS = {
    'tensor': lambda lib, d: T(lib, d),
    'tensor_max': lambda lib, d: lib.tensor([dg.iinfo(d).max if lib is dg
                                             else torch.iinfo(d).max, 0], dtype=d),
    'tensor_0d': lambda lib, d: lib.tensor(7, dtype=d),
    'zeros': lambda lib, d: lib.zeros(2, 3, dtype=d),
    'ones': lambda lib, d: lib.ones(3, dtype=d),
    'full': lambda lib, d: lib.full((2,), 9, dtype=d),
    'empty_shape': lambda lib, d: tuple(lib.empty(2, 2, dtype=d).shape),
    'zeros_like': lambda lib, d: lib.zeros_like(lib.ones(2), dtype=d),
    'randint_range': lambda lib, d: (lib.randint(0, 5, (50,), dtype=d).to(lib.int64) < 5).all(),
    'randint_dtype': lambda lib, d: lib.randint(0, 5, (3,), dtype=d).dtype,
    'repr': lambda lib, d: repr(T(lib, d)),
    'repr_0d': lambda lib, d: repr(lib.tensor(5, dtype=d)),
    'repr_wide': lambda lib, d: repr(lib.tensor([[60000, 3], [1, 2]], dtype=d)),
    'str': lambda lib, d: str(lib.zeros(2, dtype=d)),
    'type': lambda lib, d: T(lib, d).type(),
    'to_float': lambda lib, d: T(lib, d).to(lib.float32),
    'to_int64': lambda lib, d: T(lib, d).long(),
    'to_bool': lambda lib, d: lib.tensor([0, 4], dtype=d).bool(),
    'float_to': lambda lib, d: lib.tensor([1.5, 2.9, 300.0]).to(d),
    'int64_wraps': lambda lib, d: lib.tensor([-1, 5]).to(d),
    'numpy_dtype': lambda lib, d: str(T(lib, d).numpy().dtype),
    'from_numpy': lambda lib, d: lib.from_numpy(np.array([4, 5], dtype=str(d).split('.')[-1])),
    'item': lambda lib, d: lib.tensor([5], dtype=d).item(),
    'tolist': lambda lib, d: T(lib, d).tolist(),
    'eq': lambda lib, d: T(lib, d) == T(lib, d, (3, 0, 2)),
    'ne_scalar': lambda lib, d: T(lib, d) != 1,
    'mul': lambda lib, d: T(lib, d) * T(lib, d),
    'mul_scalar': lambda lib, d: T(lib, d) * 3,
    'div': lambda lib, d: T(lib, d) / T(lib, d, (2, 4, 8)),
    'add_float_scalar': lambda lib, d: T(lib, d) + 1.5,
    'mul_float_tensor': lambda lib, d: T(lib, d) * lib.tensor([0.5, 1.0, 2.0]),
    'bitand': lambda lib, d: T(lib, d) & T(lib, d, (1, 1, 6)),
    'bitor': lambda lib, d: T(lib, d) | T(lib, d, (1, 1, 6)),
    'bitxor': lambda lib, d: T(lib, d) ^ T(lib, d, (1, 1, 6)),
    'sum': lambda lib, d: T(lib, d).sum(),
    'sum_dim': lambda lib, d: lib.ones(2, 3, dtype=d).sum(1),
    'sum_dtype_int32': lambda lib, d: T(lib, d).sum(dtype=lib.int32),
    'nansum': lambda lib, d: T(lib, d).nansum(),
    'mean_dtype_float': lambda lib, d: T(lib, d).mean(dtype=lib.float32),
    'prod': lambda lib, d: T(lib, d).prod(),
    'cumsum': lambda lib, d: T(lib, d).cumsum(0),
    'cumprod': lambda lib, d: T(lib, d).cumprod(0),
    'all': lambda lib, d: T(lib, d, (0, 1, 2)).all(),
    'any': lambda lib, d: T(lib, d, (0, 1, 2)).any(),
    'sort': lambda lib, d: tuple(T(lib, d).sort()),
    'argsort': lambda lib, d: T(lib, d).argsort(),
    'unique': lambda lib, d: lib.unique(T(lib, d, (2, 2, 1))),
    'cat': lambda lib, d: lib.cat([T(lib, d), T(lib, d)]),
    'stack': lambda lib, d: lib.stack([T(lib, d), T(lib, d)]),
    'where': lambda lib, d: lib.where(lib.tensor([True, False, True]), T(lib, d),
                                      T(lib, d, (7, 8, 9))),
    'reshape': lambda lib, d: T(lib, d).reshape(3, 1),
    'slice': lambda lib, d: T(lib, d)[1:],
    'clone': lambda lib, d: T(lib, d).clone(),
    'fill_': lambda lib, d: T(lib, d).fill_(4),
    'zero_': lambda lib, d: T(lib, d).zero_(),
    'copy_': lambda lib, d: T(lib, d).copy_(lib.tensor([1.0, 2.0, 3.0])),
    'equal': lambda lib, d: lib.equal(T(lib, d), T(lib, d)),
    'isnan': lambda lib, d: T(lib, d).isnan(),
    'is_floating_point': lambda lib, d: T(lib, d).is_floating_point(),
    'is_signed': lambda lib, d: T(lib, d).is_signed(),
}


@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('case', sorted(WORKS))
def test_works_as_in_torch(case, name):
    assert_same(WORKS[case], name)


# -- what torch refuses -----------------------------------------------------------------------

def _promote(other):
    return lambda lib, d: lib.promote_types(d, dtype_of(lib, other))


REFUSED = {
    'mul_int64_tensor': lambda lib, d: T(lib, d) * lib.tensor([1, 2, 3]),
    'mul_uint8_tensor': lambda lib, d: T(lib, d) * lib.tensor([1, 2, 3], dtype=lib.uint8),
    'mul_bool_tensor': lambda lib, d: T(lib, d) * lib.tensor([True, False, True]),
    'promote_bool': _promote('bool'),
    'promote_int8': _promote('int8'),
    'promote_int64': _promote('int64'),
    'promote_uint8': _promote('uint8'),
    'max': lambda lib, d: T(lib, d).max(),
    'min': lambda lib, d: T(lib, d).min(),
    'max_dim': lambda lib, d: T(lib, d).max(0),
    'min_dim': lambda lib, d: T(lib, d).min(0),
    'amax': lambda lib, d: T(lib, d).amax(),
    'amin': lambda lib, d: T(lib, d).amin(),
    'argmax': lambda lib, d: T(lib, d).argmax(),
    'argmin_dim': lambda lib, d: T(lib, d).argmin(0),
    'aminmax': lambda lib, d: T(lib, d).aminmax(),
    'cummax': lambda lib, d: T(lib, d).cummax(0),
    'cummin': lambda lib, d: T(lib, d).cummin(0),
    'count_nonzero': lambda lib, d: T(lib, d).count_nonzero(),
    'topk': lambda lib, d: T(lib, d).topk(1),
    'kthvalue': lambda lib, d: T(lib, d).kthvalue(1),
    'median': lambda lib, d: T(lib, d).median(),
    'median_dim': lambda lib, d: T(lib, d).median(0),
    'nanmedian': lambda lib, d: T(lib, d).nanmedian(),
    'mode': lambda lib, d: T(lib, d).mode(),
    'sum_dtype_unsigned': lambda lib, d: T(lib, d).sum(dtype=d),
    'cumsum_dtype_unsigned': lambda lib, d: T(lib, d).cumsum(0, dtype=d),
    'mean': lambda lib, d: T(lib, d).mean(),
    'nanmean': lambda lib, d: T(lib, d).nanmean(),
    'std': lambda lib, d: T(lib, d).std(),
    'var': lambda lib, d: T(lib, d).var(),
    'hash_tensor': lambda lib, d: lib.hash_tensor(T(lib, d)),
}


@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('case', sorted(REFUSED))
def test_refused_as_in_torch(case, name):
    assert outcome(REFUSED[case], torch, name)[0] == 'raises'    # the premise
    assert_same(REFUSED[case], name)


# Kernels of the elementwise op modules that torch refuses on uint16/32/64: dynagrad refuses
# them too, with torch's error type and message.
KERNEL_REFUSALS = {
    'eq_int64': lambda lib, d: T(lib, d) == lib.tensor([1, 2, 3]),
    'int64_eq': lambda lib, d: lib.tensor([1, 2, 3]) == T(lib, d),
    'lt': lambda lib, d: T(lib, d) < T(lib, d),
    'ge_scalar': lambda lib, d: T(lib, d) >= 1,
    'add': lambda lib, d: T(lib, d) + T(lib, d),
    'add_scalar': lambda lib, d: T(lib, d) + 1,
    'radd': lambda lib, d: 1 + T(lib, d),
    'add_': lambda lib, d: T(lib, d).add_(1),
    'sub': lambda lib, d: T(lib, d) - 1,
    'rsub': lambda lib, d: 1 - T(lib, d),
    'floor_divide': lambda lib, d: T(lib, d) // T(lib, d),
    'remainder': lambda lib, d: T(lib, d) % T(lib, d),
    'fmod': lambda lib, d: lib.fmod(T(lib, d), T(lib, d)),
    'pow': lambda lib, d: T(lib, d) ** 2,
    'pow_tensor': lambda lib, d: T(lib, d) ** T(lib, d),
    'neg': lambda lib, d: -T(lib, d),
    'abs': lambda lib, d: T(lib, d).abs(),
    'sign': lambda lib, d: T(lib, d).sign(),
    'lshift': lambda lib, d: T(lib, d) << 1,
    'rshift': lambda lib, d: T(lib, d) >> 1,
    'invert': lambda lib, d: ~T(lib, d),
    'maximum': lambda lib, d: lib.maximum(T(lib, d), T(lib, d)),
    'minimum': lambda lib, d: lib.minimum(T(lib, d), T(lib, d)),
    'clamp': lambda lib, d: T(lib, d).clamp(0, 2),
    'clamp_min': lambda lib, d: T(lib, d).clamp(min=0),
}


@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('case', sorted(KERNEL_REFUSALS))
def test_kernels_refuse_as_torch(case, name):
    assert outcome(KERNEL_REFUSALS[case], torch, name)[0] == 'raises'    # the premise
    assert_same(KERNEL_REFUSALS[case], name)


# Refusals of the creation, random, product, mask, index and flip ops.
OTHER_REFUSALS = {
    'arange': lambda lib, d: lib.arange(3, dtype=d),
    'arange_float_bounds': lambda lib, d: lib.arange(0.0, 3.0, dtype=d),
    'linspace': lambda lib, d: lib.linspace(0, 2, 3, dtype=d),
    'logspace': lambda lib, d: lib.logspace(0, 2, 3, dtype=d),
    'eye': lambda lib, d: lib.eye(2, dtype=d),
    'eye_rect': lambda lib, d: lib.eye(2, 3, dtype=d),
    'rand': lambda lib, d: lib.rand(2, dtype=d),
    'randn': lambda lib, d: lib.randn(2, dtype=d),
    'rand_like': lambda lib, d: lib.rand_like(lib.ones(2, dtype=d)),
    'randn_like': lambda lib, d: lib.randn_like(lib.ones(2, dtype=d)),
    'matmul': lambda lib, d: lib.ones(2, 2, dtype=d) @ lib.ones(2, 2, dtype=d),
    'matmul_vec_mat': lambda lib, d: lib.ones(2, dtype=d) @ lib.ones(2, 2, dtype=d),
    'matmul_batched': lambda lib, d: lib.ones(2, 2, dtype=d) @ lib.ones(2, 2, 2, dtype=d),
    'matmul_mat_vec': lambda lib, d: lib.ones(2, 2, dtype=d) @ lib.ones(2, dtype=d),
    'matmul_vec_vec': lambda lib, d: lib.ones(2, dtype=d) @ lib.ones(2, dtype=d),
    'mm': lambda lib, d: lib.mm(lib.ones(2, 2, dtype=d), lib.ones(2, 2, dtype=d)),
    'bmm': lambda lib, d: lib.bmm(lib.ones(1, 2, 2, dtype=d), lib.ones(1, 2, 2, dtype=d)),
    'mv': lambda lib, d: lib.mv(lib.ones(2, 2, dtype=d), lib.ones(2, dtype=d)),
    'dot': lambda lib, d: lib.dot(lib.ones(2, dtype=d), lib.ones(2, dtype=d)),
    'vdot': lambda lib, d: lib.vdot(lib.ones(2, dtype=d), lib.ones(2, dtype=d)),
    'masked_fill': lambda lib, d: T(lib, d).masked_fill(lib.tensor([True, False, True]), 0),
    'masked_fill_': lambda lib, d: T(lib, d).masked_fill_(lib.tensor([True, False, True]), 0),
    'nonzero': lambda lib, d: T(lib, d).nonzero(),
    'nonzero_tuple': lambda lib, d: T(lib, d).nonzero(as_tuple=True),
    'argwhere': lambda lib, d: lib.argwhere(T(lib, d)),
    'flip': lambda lib, d: T(lib, d).flip(0),
    'flip_last_of_2d': lambda lib, d: lib.ones(2, 2, dtype=d).flip(1),
    'fliplr': lambda lib, d: lib.ones(2, 2, dtype=d).fliplr(),
    'rot90': lambda lib, d: lib.ones(2, 2, dtype=d).rot90(),
    'negative_literal_too_large': lambda lib, d: lib.tensor([-70000], dtype=d),
    'literal_too_large': lambda lib, d: lib.tensor([2 ** 64], dtype=d),
    'literal_beyond_int64': lambda lib, d: lib.tensor([2 ** 63, 1], dtype=d),
    'literal_below_int64': lambda lib, d: lib.tensor([-2 ** 63 - 1], dtype=d),
    'negative_float_literal': lambda lib, d: lib.tensor([-1.5], dtype=d),
}


@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('case', sorted(OTHER_REFUSALS))
def test_other_ops_refuse_as_torch(case, name):
    if (case == 'negative_literal_too_large' and name != 'uint16'
            or case == 'literal_beyond_int64' and name == 'uint64'):
        # uint32 wraps -70000 (its magnitude fits), uint64 refuses every negative int;
        # 2 ** 63 fits uint64
        assert_same(OTHER_REFUSALS[case], name)
        return
    assert outcome(OTHER_REFUSALS[case], torch, name)[0] == 'raises'    # the premise
    assert_same(OTHER_REFUSALS[case], name)


# What torch computes although its flip kernel refuses these dtypes: flips that leave the
# innermost dim alone are a plain copy of rows there; negative ints wrap (uint16/32) or
# raise OverflowError (uint64).
STILL_WORK = {
    'flip_first_of_2d': lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d).flip(0),
    'flipud': lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d).flipud(),
    'flip_no_dims': lambda lib, d: T(lib, d).flip(()),
    'flip_size_one_dim': lambda lib, d: lib.tensor([[1, 2]], dtype=d).flip(0),
    'flip_empty': lambda lib, d: lib.ones(0, 3, dtype=d).flip(1),
    'rot90_k0': lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d).rot90(0),
    'rot90_k3': lambda lib, d: lib.tensor([[1, 2], [3, 4]], dtype=d).rot90(3),
    'negative_literal': lambda lib, d: lib.tensor([-1, 2], dtype=d),
    'negative_literal_0d': lambda lib, d: lib.tensor(-1, dtype=d),
    'negative_literal_nested': lambda lib, d: lib.tensor([[-3], [4]], dtype=d),
    'negative_literal_large': lambda lib, d: lib.tensor([-2 ** 31 - 5], dtype=d),
}


@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('case', sorted(STILL_WORK))
def test_still_works_or_wraps_as_torch(case, name):
    assert_same(STILL_WORK[case], name)


# PyTorch words the refusal one way in its factories and another in requires_grad_()
@pytest.mark.parametrize('name', UNSIGNED)
@pytest.mark.parametrize('make', [
    lambda lib, d: lib.ones(2, dtype=d, requires_grad=True),
    lambda lib, d: lib.tensor([1, 2], dtype=d, requires_grad=True),
    lambda lib, d: lib.zeros(2, dtype=d).new_zeros(2, requires_grad=True),
    lambda lib, d: lib.ones(2, dtype=d).requires_grad_(),
], ids=['ones', 'tensor', 'new_zeros', 'requires_grad_'])
def test_requires_grad_on_an_unsigned_dtype_refused_as_torch(make, name):
    assert_same(make, name)


# -- promotion --------------------------------------------------------------------------------

ALL_NAMES = ('bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'bfloat16',
             'float32', 'float64') + UNSIGNED


def _promotion_outcome(lib, a, b):
    try:
        return dname(lib.promote_types(dtype_of(lib, a), dtype_of(lib, b)))
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


@pytest.mark.parametrize('name', UNSIGNED)
def test_promote_types_with_every_dtype(name):
    for other in ALL_NAMES:
        for a, b in ((name, other), (other, name)):
            assert _promotion_outcome(dg, a, b) == _promotion_outcome(torch, a, b), (a, b)


def _operand(lib, kind, name):
    if kind == 'scalar':
        return name
    d = dtype_of(lib, name)
    return lib.tensor([1, 1] if kind == 'dim' else 1, dtype=d)


@pytest.mark.parametrize('name', UNSIGNED)
def test_result_type_over_priority_levels(name):
    others = [('dim', n) for n in ALL_NAMES] + [('zero', n) for n in ALL_NAMES] + \
        [('scalar', s) for s in (True, 3, 2.5)]
    for kind in ('dim', 'zero'):
        for okind, other in others:
            for swap in (False, True):
                def run(lib):
                    a, b = _operand(lib, kind, name), _operand(lib, okind, other)
                    if swap:
                        a, b = b, a
                    try:
                        return dname(lib.result_type(a, b))
                    except Exception as e:  # noqa: BLE001
                        return type(e).__name__, str(e)
                assert run(dg) == run(torch), (kind, name, okind, other, swap)


# -- serialization ----------------------------------------------------------------------------

@pytest.mark.parametrize('name', UNSIGNED)
def test_checkpoints_round_trip_with_torch(name):
    values = [[0, 1, 2], [MAX[name], 7, 9]]
    buf = io.BytesIO()
    dg.save({'t': dg.tensor(values, dtype=dtype_of(dg, name))}, buf)
    buf.seek(0)
    back = torch.load(buf)['t']
    assert back.dtype is dtype_of(torch, name) and back.tolist() == values

    buf = io.BytesIO()
    torch.save({'t': torch.tensor(values, dtype=dtype_of(torch, name))}, buf)
    buf.seek(0)
    mine = dg.load(buf)['t']
    assert mine.dtype is dtype_of(dg, name) and mine.tolist() == values


def test_safetensors_files_of_torch_load():
    save = pytest.importorskip('safetensors.torch').save
    raw = save({'a': torch.tensor([1, 65535], dtype=torch.uint16),
                'b': torch.tensor([2 ** 32 - 1], dtype=torch.uint32),
                'c': torch.tensor([2 ** 63 + 5], dtype=torch.uint64)})
    got = dg.load(io.BytesIO(raw))
    for key, name, values in (('a', 'uint16', [1, 65535]), ('b', 'uint32', [2 ** 32 - 1]),
                              ('c', 'uint64', [2 ** 63 + 5])):
        assert got[key].dtype is dtype_of(dg, name) and got[key].tolist() == values


# -- hash_tensor ------------------------------------------------------------------------------

HASH_DTYPES = ('float32', 'float64', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64',
               'uint8', 'bool')


def _hash_input(lib, name):
    rng = np.random.default_rng(16)
    if name == 'bool':
        values = rng.integers(0, 2, (3, 4, 5)).astype(bool)
    elif name.startswith(('float', 'bfloat')):
        values = rng.standard_normal((3, 4, 5)) * 100
        values.flat[:4] = [np.nan, -0.0, np.inf, -np.inf]
    else:
        lo = 0 if name == 'uint8' else -100
        values = rng.integers(lo, 100, (3, 4, 5))
    return lib.tensor(values.tolist(), dtype=dtype_of(lib, name))


HASH_CALLS = {
    'all': lambda lib, x: lib.hash_tensor(x),
    'dim0': lambda lib, x: lib.hash_tensor(x, dim=0),
    'dim_neg1_keepdim': lambda lib, x: lib.hash_tensor(x, dim=-1, keepdim=True),
    'positional_dim': lambda lib, x: lib.hash_tensor(x, 1),
    'dims_tuple': lambda lib, x: lib.hash_tensor(x, dim=(0, 2)),
    'dims_list_keepdim': lambda lib, x: lib.hash_tensor(x, dim=[2, 0], keepdim=True),
    'dims_empty_tuple': lambda lib, x: lib.hash_tensor(x, dim=()),
    'method': lambda lib, x: x.hash_tensor(dim=1, mode=0),
    'transposed': lambda lib, x: lib.hash_tensor(x.transpose(0, 2), dim=0),
    'zero_dim': lambda lib, x: lib.hash_tensor(x[1, 2, 3]),
    'zero_dim_keepdim': lambda lib, x: lib.hash_tensor(x[1, 2, 3], dim=0, keepdim=True),
}


@pytest.mark.parametrize('name', HASH_DTYPES)
@pytest.mark.parametrize('call', sorted(HASH_CALLS))
def test_hash_tensor_matches_torch(call, name):
    got = HASH_CALLS[call](dg, _hash_input(dg, name))
    want = HASH_CALLS[call](torch, _hash_input(torch, name))
    assert dname(got.dtype) == dname(want.dtype) == 'uint64'
    assert tuple(got.shape) == tuple(want.shape)
    assert got.tolist() == want.tolist()


def test_hash_tensor_of_a_tensor_requiring_grad_is_not_differentiable():
    x = dg.ones(2, 3, requires_grad=True)
    h = dg.hash_tensor(x, dim=1)
    assert not h.requires_grad and h.grad_fn is None
    assert h.tolist() == torch.hash_tensor(torch.ones(2, 3, requires_grad=True), dim=1).tolist()


def test_hash_tensor_of_empty_tensors():
    for lib in (dg, torch):
        h = lib.hash_tensor(lib.zeros(2, 0), dim=0)
        assert tuple(h.shape) == (0,) and dname(h.dtype) == 'uint64'


HASH_ERRORS = {
    'mode1': lambda lib: lib.hash_tensor(lib.ones(2), mode=1),
    'empty_all': lambda lib: lib.hash_tensor(lib.zeros(0)),
    'empty_dims_tuple': lambda lib: lib.hash_tensor(lib.zeros(2, 0), dim=()),
    'empty_reduced_dim': lambda lib: lib.hash_tensor(lib.zeros(2, 0), dim=1),
    'dim_out_of_range': lambda lib: lib.hash_tensor(lib.ones(2, 3), dim=2),
    'dim_repeated': lambda lib: lib.hash_tensor(lib.ones(2, 3), dim=(0, 1, 0)),
    'dim_float': lambda lib: lib.hash_tensor(lib.ones(2, 3), dim=1.5),
    'not_a_tensor': lambda lib: lib.hash_tensor([1.0, 2.0]),
    'too_many_positional': lambda lib: lib.hash_tensor(lib.ones(2, 3), 1, True),
}


@pytest.mark.parametrize('case', sorted(HASH_ERRORS))
def test_hash_tensor_errors_match_torch(case):
    with pytest.raises(Exception) as want:
        HASH_ERRORS[case](torch)
    with pytest.raises(type(want.value)) as got:
        HASH_ERRORS[case](dg)
    if case != 'too_many_positional':      # Python's own wording names the function
        assert str(want.value) in str(got.value)
