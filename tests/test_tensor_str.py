"""Tensor text forms: the modern form against torch's repr, the legacy form
against hand-derived PyTorch 0.3 strings."""
import numpy as np
import pytest
import torch

from dynagrad._tensor_str import (format_legacy, format_tensor, get_printoptions,
                                  legacy_type_name, set_printoptions)

NP_DTYPES = {'float16': np.float16, 'float32': np.float32, 'float64': np.float64,
             'int8': np.int8, 'int16': np.int16, 'int32': np.int32,
             'int64': np.int64, 'uint8': np.uint8, 'bool': np.bool_}
FLOATS = ('float16', 'float32', 'float64')


@pytest.fixture(autouse=True)
def reset_printoptions():
    torch.set_printoptions(profile='default')
    set_printoptions(profile='default')
    yield
    torch.set_printoptions(profile='default')
    set_printoptions(profile='default')


# --------------------------------------------------------------------------
# Case table for the modern form
# --------------------------------------------------------------------------

def _float_values(kind, shape, rng):
    n = int(np.prod(shape))
    if kind == 'randn':
        v = rng.standard_normal(n)
    elif kind == 'integral':
        v = rng.integers(-50, 50, n).astype(float)
    elif kind == 'positive_integral':
        v = rng.integers(0, 9, n).astype(float)
    elif kind == 'special':
        v = rng.standard_normal(n)
        v[::3] = np.nan
        v[1::4] = np.inf
        v[2::5] = -np.inf
    elif kind == 'huge':
        v = rng.standard_normal(n) * 1e10
    elif kind == 'tiny':
        v = rng.standard_normal(n) * 1e-6
    elif kind == 'mixed':
        v = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n)
    elif kind == 'zeros':
        v = np.zeros(n)
    elif kind == 'hundreds':
        v = rng.uniform(-999, 999, n)
    else:
        raise ValueError(kind)
    return v.reshape(shape)


def _int_values(dtype_name, shape, rng):
    info = np.iinfo(NP_DTYPES[dtype_name])
    low, high = max(info.min, -10**6), min(info.max, 10**6)
    return rng.integers(low, high, shape, endpoint=True)


def _cases():
    rng = np.random.default_rng(1234)
    cases = []

    def add(name, array):
        cases.append(pytest.param(array, id=name))

    shapes = [(), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 3)]
    for dn in FLOATS:
        for kind in ('randn', 'integral', 'special', 'huge', 'tiny', 'mixed', 'zeros'):
            for shape in shapes:
                if kind in ('zeros', 'special', 'huge') and len(shape) > 2:
                    continue
                with np.errstate(over='ignore'):    # float16 'huge' -> inf
                    array = _float_values(kind, shape, rng).astype(NP_DTYPES[dn])
                add(f'{dn}-{kind}-{shape}', array)
    for dn in ('int8', 'int16', 'int32', 'int64', 'uint8'):
        for shape in shapes:
            add(f'{dn}-{shape}', _int_values(dn, shape, rng).astype(NP_DTYPES[dn]))
    for shape in shapes:
        add(f'bool-{shape}', rng.integers(0, 2, shape).astype(bool))
    # single values and short rows of note
    add('scalar-pi', np.array(3.14159265, np.float32))
    add('scalar-int-float', np.array(3.0, np.float32))
    add('scalar-neg-zero', np.array(-0.0, np.float32))
    add('scalar-nan', np.array(np.nan, np.float64))
    add('ints-as-floats', np.array([1.0, 2.0], np.float32))
    add('float-and-nan', np.array([1.0, np.nan, -np.inf], np.float32))
    add('big-integral', np.array([1.0, 1e9], np.float32))
    add('int-range-1000', np.array([1.0, 1000.0], np.float32))
    add('int-range-1001', np.array([1.0, 1001.0], np.float32))
    add('small-1e-4', np.array([1e-4, 0.5], np.float64))
    add('scalar-int', np.array(7, np.int64))
    add('scalar-bool', np.array(True))
    # summarisation (> 1000 elements) and wide rows
    add('sum-1d', rng.standard_normal(2000).astype(np.float32))
    add('sum-1d-int', np.arange(5000, dtype=np.int64))
    add('sum-2d', rng.standard_normal((40, 50)).astype(np.float32))
    add('sum-2d-rows-only', rng.standard_normal((1001, 1)).astype(np.float64))
    add('sum-2d-cols-only', (rng.standard_normal((2, 700)) * 1e4).astype(np.float32))
    add('sum-3d', rng.integers(-5, 5, (3, 20, 30)).astype(np.float32))
    add('sum-4d', rng.standard_normal((2, 3, 10, 20)).astype(np.float16))
    add('sum-bool', rng.integers(0, 2, (30, 40)).astype(bool))
    add('sum-mixed-edges', np.concatenate([[1e-8], np.ones(1500), [1e8]]).astype(np.float64))
    add('wide-1d', rng.standard_normal(100).astype(np.float32))
    add('wide-2d', rng.standard_normal((3, 30)).astype(np.float64))
    add('wide-sci', (rng.standard_normal((2, 25)) * 1e12).astype(np.float32))
    add('wide-int', rng.integers(-10**9, 10**9, (4, 30)).astype(np.int64))
    add('wide-uint8', rng.integers(0, 255, 300).astype(np.uint8))
    add('wide-3d', rng.standard_normal((2, 2, 17)).astype(np.float32))
    # empty tensors
    for dn in ('float32', 'float64', 'float16', 'int64', 'int32', 'bool', 'uint8'):
        for shape in ((0,), (0, 3), (2, 0, 3), (3, 0)):
            add(f'empty-{dn}-{shape}', np.zeros(shape, NP_DTYPES[dn]))
    return cases


CASES = _cases()
FLOAT_CASES = [c for c in CASES if c.values[0].dtype.kind == 'f']


def _expected(torch_tensor):
    return repr(torch_tensor).replace('torch.', 'dynagrad.')


def _dtype_name(array):
    return str(array.dtype) if array.dtype != np.bool_ else 'bool'


@pytest.mark.parametrize('array', CASES)
def test_plain_repr_matches_torch(array):
    t = torch.from_numpy(array.copy())
    assert format_tensor(array, dtype_name=_dtype_name(array)) == _expected(t)


@pytest.mark.parametrize('array', FLOAT_CASES)
def test_requires_grad_repr_matches_torch(array):
    t = torch.from_numpy(array.copy()).requires_grad_()
    got = format_tensor(array, dtype_name=_dtype_name(array),
                        suffixes=['requires_grad=True'])
    assert got == _expected(t)


@pytest.mark.parametrize('array', FLOAT_CASES)
def test_grad_fn_repr_matches_torch(array):
    t = torch.from_numpy(array.copy()).requires_grad_() * 1
    assert t.grad_fn.name() == 'MulBackward0'
    got = format_tensor(array, dtype_name=_dtype_name(array),
                        suffixes=['grad_fn=<MulBackward0>'])
    assert got == _expected(t)


@pytest.mark.parametrize('width', range(1, 12))
@pytest.mark.parametrize('rows', [1, 2])
def test_suffix_wrapping_at_every_length(width, rows):
    # Sweep the last line's length through the wrap point, with a dtype
    # suffix and a grad suffix after it.
    for n in range(1, 16):
        array = np.full((rows, n), 10.0 ** (width - 1) + 0.5, np.float64)
        t = torch.from_numpy(array.copy()).requires_grad_() * 1
        got = format_tensor(array, dtype_name='float64',
                            suffixes=['grad_fn=<MulBackward0>'])
        assert got == _expected(t)


def test_suffix_order_dtype_first():
    array = np.ones(2, np.float64)
    assert (format_tensor(array, dtype_name='float64', suffixes=['requires_grad=True'])
            == 'tensor([1., 1.], dtype=dynagrad.float64, requires_grad=True)')
    assert (format_tensor(array * 2, dtype_name='float64',
                          suffixes=['grad_fn=<MulBackward0>'])
            == 'tensor([2., 2.], dtype=dynagrad.float64, grad_fn=<MulBackward0>)')


def test_empty_forms():
    assert format_tensor(np.zeros((0, 3), np.float32), dtype_name='float32') \
        == 'tensor([], size=(0, 3))'
    assert format_tensor(np.zeros(0, np.int64), dtype_name='int64') \
        == 'tensor([], dtype=dynagrad.int64)'


def test_default_dtype_is_not_named():
    array = np.array([1.5, 2.0], np.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for arr in (array, array.astype(np.float32), np.zeros(0), np.zeros(0, np.float32)):
            got = format_tensor(arr, dtype_name=str(arr.dtype), default_dtype_name='float64')
            assert got == _expected(torch.from_numpy(arr.copy()))
    finally:
        torch.set_default_dtype(torch.float32)


def test_prefix_sets_the_indent():
    array = np.arange(40, dtype=np.float32).reshape(2, 20)
    lines = format_tensor(array, dtype_name='float32', prefix='Param(').split('\n')
    assert lines[0].startswith('Param([[ 0.,  1.,')
    assert lines[1].startswith(' ' * 8 + '14.')    # wrapped values line up
    assert lines[2].startswith(' ' * 7 + '[20.,')   # under the first row's '['


def test_random_arrays_match_torch():
    # A seeded sweep over shapes, dtypes, magnitudes and print options.
    rng = np.random.default_rng(2024)
    for _ in range(400):
        ndim = int(rng.integers(0, 5))
        shape = tuple(int(n) for n in rng.integers(1, 9, ndim))
        dn = str(rng.choice(list(NP_DTYPES)))
        if dn in FLOATS:
            values = rng.standard_normal(shape) * 10.0 ** rng.integers(-9, 12)
            if rng.random() < 0.5:
                values = np.round(values)
            if rng.random() < 0.2 and values.size:
                values.flat[int(rng.integers(values.size))] = rng.choice([np.nan, np.inf, -np.inf])
            with np.errstate(over='ignore'):
                array = np.asarray(values).astype(NP_DTYPES[dn])
        elif dn == 'bool':
            array = rng.integers(0, 2, shape).astype(bool)
        else:
            array = _int_values(dn, shape, rng).astype(NP_DTYPES[dn])
        options = dict(linewidth=int(rng.integers(30, 130)), precision=int(rng.integers(1, 7)),
                       threshold=int(rng.integers(20, 2000)), edgeitems=int(rng.integers(1, 4)))
        torch.set_printoptions(**options)
        set_printoptions(**options)
        t = torch.from_numpy(array.copy())
        assert format_tensor(array, dtype_name=_dtype_name(array)) == _expected(t), (array, options)


# --------------------------------------------------------------------------
# Print options against torch.set_printoptions
# --------------------------------------------------------------------------

OPTION_ARRAYS = [
    np.array([1.0, 2.5, -3.125], np.float32),
    np.array([123456.789, 0.001], np.float64),
    np.array([1.0, 1e10], np.float32),
    np.array([1e-6, 1.5], np.float32),
    np.arange(30, dtype=np.int64),
    np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 20),
    np.random.default_rng(5).standard_normal((4, 5, 6)).astype(np.float64),
    np.random.default_rng(6).standard_normal(2000).astype(np.float32),
    np.random.default_rng(7).standard_normal((50, 50)).astype(np.float32),
    np.array(2.718281828, np.float64),
]


@pytest.mark.parametrize('options', [
    dict(precision=2), dict(precision=8), dict(precision=0),
    dict(threshold=10), dict(threshold=10, edgeitems=1), dict(threshold=5, edgeitems=5),
    dict(edgeitems=1), dict(linewidth=40), dict(linewidth=120), dict(linewidth=10),
    dict(sci_mode=True), dict(sci_mode=False), dict(sci_mode=True, precision=2),
    dict(profile='short'), dict(profile='full'), dict(profile='default'),
    dict(profile='short', precision=6), dict(profile='no-such-profile'),
], ids=repr)
def test_printoptions_match_torch(options):
    torch.set_printoptions(**options)
    set_printoptions(**options)
    for array in OPTION_ARRAYS:
        t = torch.from_numpy(array.copy())
        for suffixes in ([], ['requires_grad=True']):
            if suffixes:
                t = t.double().requires_grad_() if t.dtype == torch.int64 else t.requires_grad_()
            name = str(t.dtype).replace('torch.', '')
            arr = t.detach().numpy()
            assert format_tensor(arr, dtype_name=name, suffixes=suffixes) == _expected(t)


def test_get_printoptions_mirrors_torch():
    expected = dict(torch._tensor_str.get_printoptions(), legacy=False)
    assert get_printoptions() == expected
    torch.set_printoptions(precision=3, linewidth=100, sci_mode=True)
    set_printoptions(precision=3, linewidth=100, sci_mode=True)
    assert get_printoptions() == dict(torch._tensor_str.get_printoptions(), legacy=False)


def test_sci_mode_resets_on_every_call_like_torch():
    set_printoptions(sci_mode=True)
    set_printoptions(precision=3)
    assert get_printoptions()['sci_mode'] is None


def test_legacy_flag():
    set_printoptions(legacy=True)
    set_printoptions(precision=2)          # other calls leave it alone
    assert get_printoptions()['legacy'] is True
    set_printoptions(profile='default')
    assert get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3,
                                      linewidth=80, sci_mode=None, legacy=False)


def test_get_printoptions_returns_a_copy():
    get_printoptions()['precision'] = 99
    assert get_printoptions()['precision'] == 4


# --------------------------------------------------------------------------
# Legacy (0.3) form: hand-derived strings
# --------------------------------------------------------------------------

F = 'dynagrad.FloatTensor'


def legacy(values, dtype=np.float32, type_name=F):
    return format_legacy(np.array(values, dtype=dtype), type_name=type_name)


def test_legacy_int_matrix():
    assert legacy([[1, 2], [3, 4]]) == '\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n'


def test_legacy_fixed_matrix():
    assert legacy([[0.5, 1.0], [1.5, 2.0]]) == \
        '\n 0.5000  1.0000\n 1.5000  2.0000\n[dynagrad.FloatTensor of size 2x2]\n'


def test_legacy_vectors():
    assert legacy([2, 2, 2, 2]) == '\n 2\n 2\n 2\n 2\n[dynagrad.FloatTensor of size 4]\n'
    assert legacy([27.0]) == '\n 27\n[dynagrad.FloatTensor of size 1]\n'
    assert legacy([4.5]) == '\n 4.5000\n[dynagrad.FloatTensor of size 1]\n'
    assert legacy([[2, 2, 2, 2]]) == '\n 2  2  2  2\n[dynagrad.FloatTensor of size 1x4]\n'


def test_legacy_negatives_take_the_leading_space():
    # 0.3 sized columns from magnitudes: `-1 -2 -3` under ` 1  2  3`.
    assert legacy([-1, 2]) == '\n-1\n 2\n[dynagrad.FloatTensor of size 2]\n'
    assert legacy([[1, 2, 3], [-1, -2, -3]]) == \
        '\n 1  2  3\n-1 -2 -3\n[dynagrad.FloatTensor of size 2x3]\n'


def test_legacy_wide_fixed_values():
    row = [-12170.8672, 0.0, -12170.8672, 0.0]
    expected_row = '-12170.8672      0.0000 -12170.8672      0.0000\n'
    assert legacy([row] * 3) == \
        '\n' + expected_row * 3 + '[dynagrad.FloatTensor of size 3x4]\n'


def test_legacy_scale_factor():
    assert legacy([0.001, 0.002]) == \
        '\n1.00000e-03 *\n  1.0000\n  2.0000\n[dynagrad.FloatTensor of size 2]\n'
    assert legacy([[123456.5, 200000.25]], np.float64) == \
        '\n1.00000e+05 *\n  1.2346  2.0000\n[dynagrad.FloatTensor of size 1x2]\n'


def test_legacy_scientific():
    assert legacy([1e-4, 10.5]) == \
        '\n 1.0000e-04\n 1.0500e+01\n[dynagrad.FloatTensor of size 2]\n'
    # a range of exactly `precision` digits still prints fixed
    assert legacy([1e-3, 10.5]) == \
        '\n  0.0010\n 10.5000\n[dynagrad.FloatTensor of size 2]\n'
    assert legacy([1e7, 2.0]) == \
        '\n 1.0000e+07\n 2.0000e+00\n[dynagrad.FloatTensor of size 2]\n'


def test_legacy_nan_and_inf():
    assert legacy([np.nan, np.nan]) == '\nnan\nnan\n[dynagrad.FloatTensor of size 2]\n'
    assert legacy([1.0, np.inf]) == '\n  1\ninf\n[dynagrad.FloatTensor of size 2]\n'


def test_legacy_3d():
    array = np.arange(1, 9, dtype=np.float32).reshape(2, 2, 2)
    assert format_legacy(array, type_name=F) == (
        '\n(0 ,.,.) = \n  1  2\n  3  4\n\n(1 ,.,.) = \n  5  6\n  7  8\n'
        '[dynagrad.FloatTensor of size 2x2x2]\n')


def test_legacy_4d_and_two_digit_index():
    array = np.zeros((1, 11, 1, 1), np.float32)
    text = format_legacy(array, type_name=F)
    assert text.startswith('\n(0 ,0 ,.,.) = \n  0\n\n(0 ,1 ,.,.) = \n')
    assert '\n(0 ,10,.,.) = \n  0\n[dynagrad.FloatTensor of size 1x11x1x1]\n' in text


def test_legacy_column_blocks():
    array = -np.full((1, 18), 2.5, np.float32)
    row = ' '.join(['-2.5000'] * 10)
    rest = ' '.join(['-2.5000'] * 8)
    assert format_legacy(array, type_name=F) == (
        f'\n\nColumns 0 to 9 \n{row}\n\nColumns 10 to 17 \n{rest}\n'
        '[dynagrad.FloatTensor of size 1x18]\n')


def test_legacy_no_dimension():
    assert format_legacy(np.array(3.0, np.float32), type_name=F) == \
        '[dynagrad.FloatTensor with no dimension]\n'
    assert format_legacy(np.zeros((0, 3), np.float32), type_name=F) == \
        '[dynagrad.FloatTensor with no dimension]\n'


def test_legacy_bool_prints_as_bytes():
    assert legacy([True, False], np.bool_, 'dynagrad.ByteTensor') == \
        '\n 1\n 0\n[dynagrad.ByteTensor of size 2]\n'


def test_legacy_long():
    assert legacy([[10, -3]], np.int64, 'dynagrad.LongTensor') == \
        '\n 10  -3\n[dynagrad.LongTensor of size 1x2]\n'


def test_legacy_summarised():
    text = format_legacy(np.ones(2000, np.float32), type_name=F)
    assert text == '\n' + ' 1\n' * 3 + '...\n' + ' 1\n' * 3 + \
        '[dynagrad.FloatTensor of size 2000]\n'
    text = format_legacy(np.ones((40, 40), np.float32), type_name=F)
    row = ' 1  1  1 ...  1  1  1\n'
    assert text == '\n' + row * 3 + '...\n' + row * 3 + \
        '[dynagrad.FloatTensor of size 40x40]\n'
    text = format_legacy(np.ones((10, 10, 11), np.float32), type_name=F)
    assert text.count('= \n') == 6 and '\n...\n' in text


@pytest.mark.parametrize('dtype_name, legacy_name', [
    ('float32', 'FloatTensor'), ('float64', 'DoubleTensor'), ('float16', 'HalfTensor'),
    ('uint8', 'ByteTensor'), ('int8', 'CharTensor'), ('int16', 'ShortTensor'),
    ('int32', 'IntTensor'), ('int64', 'LongTensor'), ('bool', 'BoolTensor'),
])
def test_legacy_type_name(dtype_name, legacy_name):
    assert legacy_type_name(dtype_name) == legacy_name
