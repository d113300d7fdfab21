"""dtypes and type promotion, checked against torch over full grids."""
import itertools
import pickle
import platform
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg

NAMES = ('float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'bool')
ALIASES = {'half': 'float16', 'float': 'float32', 'double': 'float64', 'short': 'int16',
           'int': 'int32', 'long': 'int64'}
# One representative Python scalar per category; values keep every op exact and nonzero.
SCALARS = (True, 3, 2.5)


def dname(d):
    """A dtype's printed name with the library prefix removed, for either library."""
    return str(d).replace('torch.', '').replace('dynagrad.', '')


def _value(name):
    return True if name == 'bool' else (2.5 if name.startswith('float') else 3)


def make(lib, name, kind):
    """A tensor of dtype ``name``: kind 'dim' has shape (2,), 'zero' is 0-dim."""
    d = getattr(lib, name)
    v = _value(name)
    return lib.tensor([v, v] if kind == 'dim' else v, dtype=d)


@pytest.fixture(autouse=True)
def restore_default_dtype():
    yield
    dg.set_default_dtype(dg.float32)
    torch.set_default_dtype(torch.float32)


# -- the dtype objects ----------------------------------------------------------------

@pytest.mark.parametrize('name', NAMES)
def test_dtype_attributes_match_torch(name):
    d, td = getattr(dg, name), getattr(torch, name)
    assert repr(d) == repr(td).replace('torch.', 'dynagrad.')
    assert str(d) == str(td).replace('torch.', 'dynagrad.')
    assert d.is_floating_point == td.is_floating_point
    assert d.is_signed == td.is_signed
    assert d.is_complex == td.is_complex
    assert d.itemsize == td.itemsize
    assert isinstance(d, dg.dtype)


@pytest.mark.parametrize('alias,name', sorted(ALIASES.items()))
def test_aliases(alias, name):
    assert getattr(dg, alias) is getattr(dg, name)
    assert getattr(torch, alias) is getattr(torch, name)


def test_dtypes_are_hashable_and_pickle_to_the_same_object():
    assert len({getattr(dg, n) for n in NAMES}) == len(NAMES)
    for n in NAMES:
        d = getattr(dg, n)
        assert pickle.loads(pickle.dumps(d)) is d
    assert dg.float32 != dg.float64
    assert dg.float32 == dg.float


@pytest.mark.parametrize('name', NAMES)
def test_tensor_is_floating_point(name):
    assert make(dg, name, 'dim').is_floating_point() == make(torch, name, 'dim').is_floating_point()


def test_default_dtype_get_set():
    assert dg.get_default_dtype() is dg.float32
    dg.set_default_dtype(dg.float64)
    assert dg.get_default_dtype() is dg.float64
    assert dg.tensor(1.5).dtype is dg.float64
    assert dg.tensor([1, 2]).dtype is dg.int64
    assert dg.zeros(2).dtype is dg.float64
    assert dg.arange(0.0, 1.0, 0.5).dtype is dg.float64
    dg.set_default_dtype(dg.float16)
    assert dg.ones(1).dtype is dg.float16
    dg.set_default_dtype(dg.float32)
    assert dg.tensor(1.5).dtype is dg.float32


@pytest.mark.parametrize('name', ('int64', 'int32', 'bool', 'uint8'))
def test_set_default_dtype_rejects_non_float(name):
    with pytest.raises(TypeError):
        torch.set_default_dtype(getattr(torch, name))
    with pytest.raises(TypeError):
        dg.set_default_dtype(getattr(dg, name))
    assert dg.get_default_dtype() is dg.float32


def test_promote_types_full_grid():
    bad = []
    for a, b in itertools.product(NAMES, NAMES):
        got = dname(dg.promote_types(getattr(dg, a), getattr(dg, b)))
        want = dname(torch.promote_types(getattr(torch, a), getattr(torch, b)))
        if got != want:
            bad.append((a, b, got, want))
    assert not bad


# -- result_type and operator result dtypes over the three priority levels -------------

def _operands(lib, spec):
    """spec: ('dim', name) | ('zero', name) | ('scalar', value)."""
    kind, x = spec
    return x if kind == 'scalar' else make(lib, x, kind)


def _specs(kind):
    if kind == 'scalar':
        return [('scalar', s) for s in SCALARS]
    return [(kind, n) for n in NAMES]


KIND_PAIRS = [('dim', 'dim'), ('dim', 'zero'), ('zero', 'dim'), ('zero', 'zero'),
              ('dim', 'scalar'), ('scalar', 'dim'), ('zero', 'scalar'), ('scalar', 'zero')]

OPS = {
    'result_type': (dg.result_type, torch.result_type),
    'add': (lambda a, b: a + b,) * 2,
    'mul': (lambda a, b: a * b,) * 2,
    'truediv': (lambda a, b: a / b,) * 2,
}


def _outcome(fn, a, b):
    try:
        r = fn(a, b)
    except Exception as e:  # noqa: BLE001 - the type of failure is part of what is compared
        return ('raises', type(e).__name__)
    if isinstance(r, (dg.dtype, torch.dtype)):
        return dname(r)
    values = np.asarray(r.detach() if isinstance(r, torch.Tensor) else r).astype(np.float64)
    # torch computes scalar / tensor as scalar * reciprocal(tensor): allow one rounding.
    return dname(r.dtype), tuple(r.shape), tuple(np.round(values, 2).ravel().tolist())


@pytest.mark.parametrize('op', sorted(OPS))
@pytest.mark.parametrize('kinds', KIND_PAIRS, ids=['-'.join(k) for k in KIND_PAIRS])
def test_promotion_grid_against_torch(op, kinds):
    dg_fn, torch_fn = OPS[op]
    bad = []
    for sa, sb in itertools.product(_specs(kinds[0]), _specs(kinds[1])):
        got = _outcome(dg_fn, _operands(dg, sa), _operands(dg, sb))
        want = _outcome(torch_fn, _operands(torch, sa), _operands(torch, sb))
        if got != want:
            bad.append((sa, sb, got, want))
    assert not bad, f'{len(bad)} mismatches, first: {bad[:5]}'


@pytest.mark.parametrize('kinds', [('dim', 'scalar'), ('zero', 'scalar')])
def test_result_type_float_scalar_follows_default_dtype(kinds):
    dg.set_default_dtype(dg.float64)
    torch.set_default_dtype(torch.float64)
    bad = []
    for sa in _specs(kinds[0]):
        for fn_dg, fn_t in (OPS['result_type'], OPS['add']):
            got = _outcome(fn_dg, _operands(dg, sa), 2.5)
            want = _outcome(fn_t, _operands(torch, sa), 2.5)
            if got != want:
                bad.append((sa, got, want))
    assert not bad


@pytest.mark.parametrize('a,b', list(itertools.product(SCALARS, SCALARS)))
def test_result_type_of_two_scalars(a, b):
    assert dname(dg.result_type(a, b)) == dname(torch.result_type(a, b))


# -- floating -> integer conversions beyond the integer's range --------------------------

_X86 = platform.machine().lower() in ('x86_64', 'amd64')
_CAST_VALUES = np.concatenate([
    [127.5, 128.0, 200.0, 255.0, 256.0, 300.0, -129.0, -200.0, -300.0, 32767.0, 32768.0,
     40000.0, 65535.0, 65536.0, 70000.0, -40000.0, 2.0 ** 31 - 128, 2.0 ** 31, 3e9, 3e9 + 7,
     2.0 ** 32, 5e9, -3e9, -3e9 - 7, 2.0 ** 63, 1e19, 2.0 ** 64, 1e20, -1e20, 1e30, -1e30,
     np.inf, -np.inf, np.nan, -0.5, -1.0, -1.5, 0.0, -0.0, -2.0 ** 31, -2.0 ** 31 - 0.5,
     -2.0 ** 63, 2.0 ** 31 - 0.5],
    np.random.default_rng(29).standard_normal(400)
    * 10.0 ** np.random.default_rng(30).integers(0, 25, 400)])


@pytest.mark.parametrize('source', ['float64', 'float32', 'float16', 'bfloat16'])
@pytest.mark.parametrize('target', ['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
                                    'uint32', 'uint64', 'bool'])
def test_float_to_integer_as_torch_beyond_the_range(source, target):
    """PyTorch's CPU results for values that do not fit, infinities and NaN (C leaves them
    undefined, and NumPy's and ml_dtypes' answers change between releases), without
    warnings."""
    if source == 'bfloat16':
        pytest.importorskip('ml_dtypes')
    theirs = torch.from_numpy(_CAST_VALUES).to(getattr(torch, source))
    wide = theirs.double()
    if target == 'bool':
        keep = torch.ones_like(wide, dtype=torch.bool)
    elif _X86:
        keep = torch.ones_like(wide, dtype=torch.bool)
        if target == 'uint32':
            # here PyTorch's answer depends on the element's place in its vectorised loop
            keep = (wide >= -2.0 ** 31) & (wide < 2.0 ** 32)
    else:
        keep = (wide >= -2.0 ** 31) & (wide < 2.0 ** 31)   # the rest is the CPU's
    expected = theirs.to(getattr(torch, target))[keep].tolist()
    mine = dg.from_numpy(_CAST_VALUES).to(getattr(dg, source))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        got = mine.to(getattr(dg, target))
    assert got.dtype is getattr(dg, target)
    assert got[dg.from_numpy(keep.numpy())].tolist() == expected


def test_in_range_float_to_integer_keeps_its_dtype_and_truncates():
    x = dg.tensor([[2.7, -2.7], [0.0, 1e9]])
    assert x.long().tolist() == [[2, -2], [0, 1000000000]]
    assert x.int().dtype is dg.int32 and x[0].to(dg.int8).tolist() == [2, -2]
    empty = dg.zeros(0, 3)
    assert empty.long().shape == (0, 3) and empty.long().dtype is dg.int64


def test_narrowing_float_casts_overflow_to_inf_silently():
    x = dg.tensor([1e300, -1e300, 1.0], dtype=dg.float64)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert x.float().tolist() == [float('inf'), float('-inf'), 1.0]
        assert x.half().tolist() == [float('inf'), float('-inf'), 1.0]
