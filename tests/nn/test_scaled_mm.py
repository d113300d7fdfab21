"""F.scaled_mm, F.scaled_grouped_mm and their enums F.ScalingType / F.SwizzleType against
torch 2.13 on the CPU: float8 operands (TensorWise and RowWise recipes, mixed formats, every
output dtype, bias), PyTorch's refusals with its error types and texts, the missing
derivative, and scaled_grouped_mm's CPU refusal."""
import inspect

import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as DF
import torch.nn.functional as TF

M, K, N = 8, 32, 12
F8 = ('float8_e4m3fn', 'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz', 'float8_e8m0fnu')


def pair(a, dtype_name=None):
    """The same values as a dynagrad and a torch tensor, both rounded into ``dtype_name``
    by their own library (the float8 casts agree bit for bit)."""
    a = np.array(a, dtype=np.float32, order="C")    # 0-D stays 0-D
    d, t = dynagrad.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if dtype_name is not None:
        d, t = d.to(getattr(dynagrad, dtype_name)), t.to(getattr(torch, dtype_name))
    return d, t


def rand(*shape, seed=0, scale=1.0, low=None):
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, low + 1, shape)
    return rng.standard_normal(shape) * scale


def operands(fmt_a='float8_e4m3fn', fmt_b='float8_e4m3fn', k=K):
    """mat_a (M, k) and mat_b (k, N), mat_b column-major as the GPU kernels want it."""
    a = pair(rand(M, k, seed=1), fmt_a)
    bt = pair(rand(N, k, seed=2), fmt_b)
    return a, (bt[0].t(), bt[1].t())


def values(x):
    return x.detach().to(dynagrad.float64 if isinstance(x, dynagrad.Tensor) else
                         torch.float64).numpy()


def call_both(d_args, t_args, **kwargs):
    """``scaled_mm`` on both libraries; keyword values are (dynagrad, torch) pairs."""
    d_kw = {k: v[0] for k, v in kwargs.items()}
    t_kw = {k: v[1] for k, v in kwargs.items()}
    return DF.scaled_mm(*d_args, **d_kw), TF.scaled_mm(*t_args, **t_kw)


def recipes(name):
    return getattr(DF.ScalingType, name), getattr(TF.ScalingType, name)


# -- the enums -----------------------------------------------------------------------------

@pytest.mark.parametrize('enum', ['ScalingType', 'SwizzleType'])
def test_enums_match_torch(enum):
    d_enum, t_enum = getattr(DF, enum), getattr(TF, enum)
    assert list(d_enum.__members__) == list(t_enum.__members__)
    for name, t_member in t_enum.__members__.items():
        d_member = getattr(d_enum, name)
        assert (d_member.name, d_member.value, int(d_member)) == \
            (t_member.name, t_member.value, int(t_member))
        assert repr(d_member) == repr(t_member)
        assert str(d_member) == str(t_member)
        assert (d_member == t_member.value) == (t_member == t_member.value)
        assert d_enum(t_member.value) is d_member


def test_signatures_match_torch():
    for fn in ('scaled_mm', 'scaled_grouped_mm'):
        d_params = inspect.signature(getattr(DF, fn)).parameters
        t_params = inspect.signature(getattr(TF, fn)).parameters
        assert list(d_params) == list(t_params)
        for name, t_param in t_params.items():
            default = t_param.default
            expected = (dynagrad.bfloat16 if default is torch.bfloat16 else default)
            assert d_params[name].default == expected, (fn, name)


# -- values ----------------------------------------------------------------------------------

def _check_values(d_out, t_out):
    assert str(d_out.dtype).split('.')[1] == str(t_out.dtype).split('.')[1]
    assert tuple(d_out.shape) == tuple(t_out.shape)
    dt = t_out.dtype
    if dt.is_floating_point:
        # one rounding from float32; the float32 sums may differ in their last bit
        tol = max(torch.finfo(dt).eps, 1e-6)
        np.testing.assert_allclose(values(d_out), values(t_out), rtol=tol, atol=tol)
    else:   # integers truncate: a sum a last bit apart may land one off
        np.testing.assert_allclose(values(d_out), values(t_out), rtol=0, atol=1)


@pytest.mark.parametrize('fmt_a,fmt_b', [(f, f) for f in F8] + [
    ('float8_e4m3fn', 'float8_e5m2'), ('float8_e5m2', 'float8_e4m3fnuz')])
@pytest.mark.parametrize('recipe', ['TensorWise', 'RowWise'])
def test_values_per_format_and_recipe(fmt_a, fmt_b, recipe):
    a, b = operands(fmt_a, fmt_b)
    if recipe == 'TensorWise':
        sa, sb = pair(np.float32(0.37)), pair(np.float32(1.9))
    else:
        sa, sb = pair(rand(M, 1, seed=3, low=0.5)), pair(rand(1, N, seed=4, low=0.5))
    rec = recipes(recipe)
    d_out, t_out = call_both((a[0], b[0], sa[0], rec[0], sb[0], rec[0]),
                             (a[1], b[1], sa[1], rec[1], sb[1], rec[1]),
                             output_dtype=(dynagrad.float32, torch.float32))
    _check_values(d_out, t_out)


@pytest.mark.parametrize('out', ['bfloat16', 'float16', 'float32', 'float64', None,
                                 'float8_e4m3fn', 'float8_e8m0fnu', 'int32', 'int8', 'bool'])
def test_output_dtypes(out):
    a, b = operands('float8_e4m3fn', 'float8_e5m2', k=4)     # small sums: int8 in range
    sa, sb = pair(np.float32(0.5)), pair(np.float32(1.25))
    rec = recipes('TensorWise')
    out_pair = (None, None) if out is None else (getattr(dynagrad, out), getattr(torch, out))
    d_out, t_out = call_both((a[0], b[0], sa[0], rec[0], sb[0], rec[0]),
                             (a[1], b[1], sa[1], rec[1], sb[1], rec[1]), output_dtype=out_pair)
    _check_values(d_out, t_out)


@pytest.mark.parametrize('shape', [(), (1,), (1, 1), (1, 1, 1)])
def test_tensorwise_takes_any_singleton_scale(shape):
    a, b = operands()
    sa = pair(np.full(shape, 0.75, np.float32))
    sb = pair(np.full(shape, 2.0, np.float32))
    rec = recipes('TensorWise')
    d_out, t_out = call_both((a[0], b[0], sa[0], rec[0], sb[0], rec[0]),
                             (a[1], b[1], sa[1], rec[1], sb[1], rec[1]))
    _check_values(d_out, t_out)


@pytest.mark.parametrize('bias_dtype', ['float32', 'bfloat16', 'float16'])
@pytest.mark.parametrize('bias_shape', [(N,), (1, N)])
@pytest.mark.parametrize('out', ['bfloat16', 'float32'])
@pytest.mark.parametrize('recipe', ['TensorWise', 'RowWise'])
def test_bias(bias_dtype, bias_shape, out, recipe):
    a, b = operands()
    if recipe == 'TensorWise':
        sa, sb = pair(np.float32(0.5)), pair(np.float32(1.5))
    else:
        sa, sb = pair(rand(M, 1, seed=3, low=0.5)), pair(rand(1, N, seed=4, low=0.5))
    bias = pair(rand(*bias_shape, seed=5), bias_dtype)
    rec = recipes(recipe)
    d_out, t_out = call_both((a[0], b[0], sa[0], rec[0], sb[0], rec[0]),
                             (a[1], b[1], sa[1], rec[1], sb[1], rec[1]), bias=bias,
                             output_dtype=(getattr(dynagrad, out), getattr(torch, out)))
    _check_values(d_out, t_out)


def test_lists_of_one_swizzle_none_and_ignored_flags():
    a, b = operands()
    sa, sb = pair(rand(M, 1, seed=3, low=0.5)), pair(rand(1, N, seed=4, low=0.5))
    rec = recipes('RowWise')
    no_swizzle = (DF.SwizzleType.NO_SWIZZLE, TF.SwizzleType.NO_SWIZZLE)
    d_out, t_out = call_both((a[0], b[0], [sa[0]], [rec[0]], [sb[0]], [rec[0]]),
                             (a[1], b[1], [sa[1]], [rec[1]], [sb[1]], [rec[1]]),
                             swizzle_a=no_swizzle, swizzle_b=([no_swizzle[0]], [no_swizzle[1]]),
                             contraction_dim=((1, 0), (1, 0)), use_fast_accum=(True, True))
    _check_values(d_out, t_out)


@pytest.mark.parametrize('swizzles', [('SWIZZLE_32_4_4', None), (None, 'SWIZZLE_32_4_4'),
                                      (['NO_SWIZZLE', 'SWIZZLE_32_4_4'], 'NO_SWIZZLE'),
                                      ([], [])])
def test_swizzles_the_cpu_ignores(swizzles):
    # PyTorch's CPU refuses SWIZZLE_32_4_4 only when both swizzles are given (first entries)
    def member(x, i):
        enum = (DF, TF)[i].SwizzleType
        if isinstance(x, list):
            return [getattr(enum, e) for e in x]
        return None if x is None else getattr(enum, x)
    a, b = operands()
    s = pair(np.float32(0.5))
    rec = recipes('TensorWise')
    d_out, t_out = call_both((a[0], b[0], s[0], rec[0], s[0], rec[0]),
                             (a[1], b[1], s[1], rec[1], s[1], rec[1]),
                             swizzle_a=(member(swizzles[0], 0), member(swizzles[0], 1)),
                             swizzle_b=(member(swizzles[1], 0), member(swizzles[1], 1)))
    _check_values(d_out, t_out)


@pytest.mark.parametrize('m,k,n', [(0, 16, 4), (4, 0, 4), (3, 5, 7)])
def test_empty_and_odd_sizes(m, k, n):
    a = pair(rand(m, k, seed=1), 'float8_e4m3fn')
    b = pair(rand(k, n, seed=2), 'float8_e4m3fn')
    s = pair(np.float32(1.0))
    rec = recipes('TensorWise')
    d_out, t_out = call_both((a[0], b[0], s[0], rec[0], s[0], rec[0]),
                             (a[1], b[1], s[1], rec[1], s[1], rec[1]))
    _check_values(d_out, t_out)


# -- refusals --------------------------------------------------------------------------------

def _error_cases():
    """name -> a function of the library index (0 dynagrad, 1 torch) giving the arguments."""
    def make(fmt_a='float8_e4m3fn', fmt_b='float8_e4m3fn', recipe='TensorWise', sa=None,
             sb=None, ra=None, rb=None, a_shape=(M, K), b_shape=(K, N), listed_a=None,
             **kw):
        def args(i):
            a = pair(rand(*a_shape, seed=1), fmt_a)[i]
            b = pair(rand(*b_shape, seed=2), fmt_b)[i]
            if recipe == 'TensorWise':
                default_a, default_b = np.float32(1.0), np.float32(1.0)
            else:
                default_a, default_b = rand(M, 1, seed=3, low=.5), rand(1, N, seed=4, low=.5)
            s_a = sa if sa is not None else (default_a, None)
            s_b = sb if sb is not None else (default_b, None)
            scale_a = pair(*s_a)[i]
            if listed_a is not None:    # scale_a as a list of that many copies
                scale_a = [scale_a] * listed_a
            scale_b = pair(*s_b)[i]
            rec_a = recipes(ra or recipe)[i] if not isinstance(ra, int) else ra
            rec_b = recipes(rb or recipe)[i]
            extra = {k: (v[i] if isinstance(v, tuple) and len(v) == 2 else v)
                     for k, v in kw.items()}
            return (a, b, scale_a, rec_a, scale_b, rec_b), extra
        return args

    swz = (DF.SwizzleType.SWIZZLE_32_4_4, TF.SwizzleType.SWIZZLE_32_4_4)
    no_swz = (DF.SwizzleType.NO_SWIZZLE, TF.SwizzleType.NO_SWIZZLE)
    return {
        'bfloat16 operand': make(fmt_a='bfloat16'),
        'float32 operand': make(fmt_b='float32'),
        'int8 operand': make(fmt_a='int8'),
        'float64 scale': make(sa=(np.float32(1.0), 'float64')),
        'bfloat16 row scales': make(recipe='RowWise', sa=(rand(M, 1, low=.5), 'bfloat16')),
        'e8m0 scale': make(sb=(np.float32(1.0), 'float8_e8m0fnu')),
        'mixed recipes': make(recipe='RowWise', ra='TensorWise', sa=(np.float32(1.0), None)),
        'block-wise 1x32': make(ra='BlockWise1x32', rb='BlockWise1x32'),
        'block-wise 128x128': make(ra='BlockWise128x128', rb='BlockWise128x128'),
        'tensorwise two scales': make(sb=(np.ones(2, np.float32), None)),
        'tensorwise empty scale': make(sa=(np.ones(0, np.float32), None)),
        'tensorwise with row scales': make(sa=(rand(M, 1, low=.5), None)),
        'rowwise scale_a shape': make(recipe='RowWise', sa=(rand(M + 1, 1, low=.5), None)),
        'rowwise scale_b size': make(recipe='RowWise', sb=(rand(1, N + 1, low=.5), None)),
        'rowwise 1-D scale_b': make(recipe='RowWise', sb=(rand(N, low=.5), None)),
        'rowwise 0-D scales': make(recipe='RowWise', sa=(np.float32(1), None),
                                   sb=(np.float32(1), None)),
        '3-D mat_a': make(a_shape=(1, M, K)),
        '1-D mat_b': make(b_shape=(K,)),
        'contraction mismatch': make(b_shape=(K // 2, N)),
        'matrix check before dtype': make(fmt_a='bfloat16', a_shape=(2, M, K)),
        'shape check before dtype': make(fmt_a='bfloat16', b_shape=(3, N)),
        'bias size': make(bias=pair(rand(N + 1))),
        'bias 0-D': make(bias=pair(np.float32(1.0))),
        'bias int': make(bias=pair(np.ones(N), 'int32')),
        'bias float64': make(bias=pair(np.ones(N), 'float64')),
        'bias size before dtype': make(bias=pair(np.ones(3), 'int32')),
        'both swizzled': make(swizzle_a=swz, swizzle_b=swz),
        'swizzle a': make(swizzle_a=swz, swizzle_b=no_swz),
        'swizzle b rowwise': make(recipe='RowWise', swizzle_a=no_swz,
                                  swizzle_b=([swz[0]], [swz[1]])),
        'bias before swizzle': make(bias=pair(np.ones(3)), swizzle_a=swz, swizzle_b=swz),
        'swizzle before scaling': make(fmt_a='bfloat16', swizzle_a=swz, swizzle_b=swz),
        'swizzle before scale count': make(sb=(np.ones(2, np.float32), None), swizzle_a=swz,
                                           swizzle_b=swz),
        'bias size before scaling': make(fmt_a='bfloat16', bias=pair(np.ones(3))),
        'bias dtype before scaling': make(sa=(np.ones(2, np.float32), None),
                                          bias=pair(np.ones(N), 'int32')),
        'bias dtype before swizzle': make(bias=pair(np.ones(N), 'int32'), swizzle_a=swz,
                                          swizzle_b=swz),
        'recipe type before shapes': make(ra=0, a_shape=(1, M, K)),
        'empty list of scales': make(listed_a=0),
        'two scales in a list': make(listed_a=2),
        'recipe not an enum': make(ra=0),
        'swizzle not an enum': make(swizzle_b=1),
    }


ERROR_CASES = _error_cases()


@pytest.mark.parametrize('case', list(ERROR_CASES))
def test_refusals_match_torch(case):
    d_args, d_kw = ERROR_CASES[case](0)
    t_args, t_kw = ERROR_CASES[case](1)
    with pytest.raises(Exception) as t_err:
        TF.scaled_mm(*t_args, **t_kw)
    with pytest.raises(t_err.type) as d_err:
        DF.scaled_mm(*d_args, **d_kw)
    assert str(t_err.value) in str(d_err.value)


def test_rowwise_scale_b_transposed_is_refused():
    # torch fails later, in its broadcast (a RuntimeError with a size message); dynagrad
    # refuses the shape up front with the same error type
    a, b = operands()
    sa, sb = pair(rand(M, 1, seed=3, low=.5)), pair(rand(N, 1, seed=4, low=.5))
    rec = recipes('RowWise')
    with pytest.raises(RuntimeError):
        TF.scaled_mm(a[1], b[1], sa[1], rec[1], sb[1], rec[1])
    with pytest.raises(RuntimeError, match=r'scale_b must have shape \[1, 12\]'):
        DF.scaled_mm(a[0], b[0], sa[0], rec[0], sb[0], rec[0])


# -- gradients: PyTorch defines none --------------------------------------------------------

def test_no_derivative():
    a, b = operands()
    sa = pair(np.float32(0.5))
    sa[0].requires_grad_()
    sa[1].requires_grad_()
    sb = pair(np.float32(1.0))
    rec = recipes('TensorWise')
    d_out, t_out = call_both((a[0], b[0], sa[0], rec[0], sb[0], rec[0]),
                             (a[1], b[1], sa[1], rec[1], sb[1], rec[1]))
    assert d_out.requires_grad and t_out.requires_grad
    assert type(d_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    message = 'derivative for aten::_scaled_mm_v2 is not implemented'
    with pytest.raises(RuntimeError, match=message):
        t_out.float().sum().backward()
    with pytest.raises(RuntimeError, match=message):
        d_out.float().sum().backward()
    plain, _ = call_both((a[0], b[0], sa[0].detach(), rec[0], sb[0], rec[0]),
                         (a[1], b[1], sa[1].detach(), rec[1], sb[1], rec[1]))
    assert not plain.requires_grad


# -- scaled_grouped_mm: no CPU kernel ---------------------------------------------------------

@pytest.mark.parametrize('layout', ['3d-3d', '2d-3d', '2d-2d'])
@pytest.mark.parametrize('recipe', ['TensorWise', 'RowWise'])
def test_scaled_grouped_mm_has_no_cpu_kernel(layout, recipe):
    g = 2
    shapes = {'3d-3d': ((g, M, K), (g, K, N), None), '2d-3d': ((M, K), (g, K, N), [4, 8]),
              '2d-2d': ((M, 2 * K), (2 * K, N), [K, 2 * K])}[layout]
    rec = recipes(recipe)
    for i, (lib, fn) in enumerate(((dynagrad, DF), (torch, TF))):
        a = pair(rand(*shapes[0]), 'float8_e4m3fn')[i]
        b = pair(rand(*shapes[1]), 'float8_e4m3fn')[i]
        s = pair(np.float32(1.0))[i]
        offs = None if shapes[2] is None else lib.tensor(shapes[2], dtype=lib.int32)
        with pytest.raises(NotImplementedError, match="Could not run "
                           "'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' "
                           "backend"):
            fn.scaled_grouped_mm(a, b, s, rec[i], s, rec[i], offs=offs)


def test_scaled_grouped_mm_checks_recipe_types_first():
    for i, fn in enumerate((DF, TF)):
        a = pair(rand(2, M, K), 'float8_e4m3fn')[i]
        s = pair(np.float32(1.0))[i]
        with pytest.raises(AttributeError, match="'int' object has no attribute 'value'"):
            fn.scaled_grouped_mm(a, a.transpose(-2, -1), s, 0, s,
                                 recipes('TensorWise')[i])
