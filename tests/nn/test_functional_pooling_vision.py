"""Pooling and vision functions: what the op table cannot express, checked against torch.

* second derivatives on inputs larger than gradgradcheck's (every input and the upstream
  gradient, compared with torch's values);
* max_unpool2d on indices of overlapping windows (repeated indices);
* max_unpool3d of max_pool3d's indices, and max_unpool1d's;
* dtype rules of nearest interpolation;
* antialiased interpolation where torch's own kernel is wrong (output width 1), and its
  half-precision refusal.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import dynagrad
import dynagrad.nn.functional as DF


def _pair(array, requires_grad=True):
    a = np.array(array, copy=True)
    d = dynagrad.tensor(a.copy(), requires_grad=requires_grad and a.dtype.kind == 'f')
    t = torch.from_numpy(a.copy()).requires_grad_(requires_grad and a.dtype.kind == 'f')
    return d, t


def _double_backward(fn, arrays, seed=0):
    """d/d(inputs, g) of <grad(fn(inputs), inputs; g), v>, in both libraries."""
    rng = np.random.default_rng(seed)
    results = []
    for lib, k in ((dynagrad, 0), (torch, 1)):
        leaves = [_pair(a)[k] for a in arrays]
        out = fn(lib, *leaves)
        g_arr = rng.standard_normal(tuple(out.shape))
        g = _pair(g_arr)[k]
        grads = lib.autograd.grad(out, leaves, g, create_graph=True)
        v = [rng.standard_normal(tuple(x.shape)) for x in leaves]
        total = sum((gr * _pair(vv, False)[k]).sum() for gr, vv in zip(grads, v)
                    if gr is not None and gr.requires_grad)
        wrt = leaves + [g]
        second = lib.autograd.grad(total, wrt, allow_unused=True)
        results.append([None if s is None else s.detach().numpy() for s in second])
        rng = np.random.default_rng(seed)   # same g and v for the other library
    for d, t in zip(*results):
        if t is None or not np.any(t):
            assert d is None or not np.any(d)
        else:
            np.testing.assert_allclose(d, t, rtol=1e-9, atol=1e-10)


def F(name, **kwargs):
    return lambda lib, *args, **more: getattr(lib.nn.functional, name)(*args,
                                                                      **{**kwargs, **more})


R = np.random.default_rng(1)


def x4(*shape):
    return R.standard_normal(shape)


CASES = [
    ('max_pool2d_fast', F('max_pool2d', kernel_size=2), [x4(2, 3, 4, 6)]),
    ('max_pool2d_overlap', F('max_pool2d', kernel_size=3, stride=2, padding=1,
                             ceil_mode=True), [x4(2, 2, 5, 6)]),
    ('avg_pool2d_fast', F('avg_pool2d', kernel_size=2), [x4(2, 3, 4, 6)]),
    ('avg_pool2d_pad', F('avg_pool2d', kernel_size=3, stride=2, padding=1,
                         count_include_pad=False, ceil_mode=True), [x4(2, 2, 5, 6)]),
    ('adaptive_avg_pool2d', F('adaptive_avg_pool2d', output_size=(3, 4)), [x4(2, 2, 5, 7)]),
    ('adaptive_max_pool2d', F('adaptive_max_pool2d', output_size=(3, 4)), [x4(2, 2, 5, 7)]),
    ('pad_reflect', F('pad', pad=(2, 1, 1, 2), mode='reflect'), [x4(2, 2, 4, 5)]),
    ('pad_circular_crop', F('pad', pad=(2, -1, 1, 2), mode='circular'), [x4(2, 2, 4, 5)]),
    ('pad_constant_crop', F('pad', pad=(2, -1, -1, 2), value=3.0), [x4(2, 2, 4, 5)]),
    ('interp_nearest', F('interpolate', scale_factor=1.6), [x4(2, 2, 4, 5)]),
    ('interp_bilinear', F('interpolate', size=(7, 3), mode='bilinear'), [x4(2, 2, 4, 5)]),
    ('interp_bicubic', F('interpolate', scale_factor=1.5, mode='bicubic',
                         align_corners=True), [x4(2, 2, 4, 5)]),
    ('grid_sample_bilinear', F('grid_sample', align_corners=False),
     [x4(2, 3, 4, 5), R.uniform(-1.2, 1.2, (2, 3, 4, 2))]),
    ('grid_sample_reflection', F('grid_sample', padding_mode='reflection', align_corners=True),
     [x4(2, 3, 4, 5), R.uniform(-2.5, 2.5, (2, 3, 4, 2))]),
    ('grid_sample_border_nearest', F('grid_sample', mode='nearest', padding_mode='border',
                                     align_corners=False),
     [x4(2, 3, 4, 5), R.uniform(-1.2, 1.2, (2, 3, 4, 2))]),
    ('affine_grid', F('affine_grid', size=(2, 1, 3, 4), align_corners=False), [x4(2, 2, 3)]),
    ('pixel_shuffle', F('pixel_shuffle', upscale_factor=2), [x4(2, 8, 2, 3)]),
    ('lp_pool2d', F('lp_pool2d', norm_type=2, kernel_size=2), [x4(2, 2, 4, 4)]),
    ('max_pool3d_fast', F('max_pool3d', kernel_size=2), [x4(2, 2, 4, 4, 6)]),
    ('max_pool3d_overlap', F('max_pool3d', kernel_size=3, stride=2, padding=1,
                             ceil_mode=True), [x4(1, 2, 5, 4, 6)]),
    ('avg_pool3d_fast', F('avg_pool3d', kernel_size=2), [x4(2, 2, 4, 4, 6)]),
    ('avg_pool3d_pad', F('avg_pool3d', kernel_size=3, stride=2, padding=1,
                         count_include_pad=False, ceil_mode=True), [x4(1, 2, 5, 4, 6)]),
    ('adaptive_avg_pool3d', F('adaptive_avg_pool3d', output_size=(3, 2, 4)),
     [x4(2, 2, 5, 3, 7)]),
    ('adaptive_max_pool3d', F('adaptive_max_pool3d', output_size=(3, 2, 4)),
     [x4(2, 2, 5, 3, 7)]),
    ('fractional_max_pool2d', F('fractional_max_pool2d', kernel_size=2, output_size=(3, 4),
                                _random_samples=None), [x4(2, 2, 6, 7)]),
    ('interp_trilinear', F('interpolate', scale_factor=(1.5, 0.7, 2), mode='trilinear'),
     [x4(1, 2, 3, 4, 3)]),
    ('channel_shuffle', F('channel_shuffle', groups=3), [x4(2, 6, 2, 3)]),
]

# fixed windows for fractional pooling (the same in both libraries)
_SAMPLES = R.random((2, 2, 2))
CASES = [(name, (lambda lib, *a, _fn=fn: _fn(lib, *a, _random_samples=lib.tensor(_SAMPLES)))
          if name.startswith('fractional') else fn, arrays) for name, fn, arrays in CASES]

CASES += [
    ('grid_sample_bicubic', F('grid_sample', mode='bicubic', padding_mode='zeros',
                              align_corners=False),
     [x4(2, 2, 4, 5), R.uniform(-1.3, 1.3, (2, 3, 2, 2))]),
    ('grid_sample_bicubic_reflection', F('grid_sample', mode='bicubic',
                                         padding_mode='reflection', align_corners=True),
     [x4(1, 2, 4, 5), R.uniform(-2.5, 2.5, (1, 3, 2, 2))]),
    ('interp_bilinear_antialias', F('interpolate', size=(3, 4), mode='bilinear',
                                    antialias=True), [x4(2, 2, 7, 9)]),
    ('interp_bicubic_antialias', F('interpolate', scale_factor=0.4, mode='bicubic',
                                   antialias=True), [x4(1, 2, 8, 10)]),
]


@pytest.mark.parametrize('name,fn,arrays', CASES, ids=[c[0] for c in CASES])
def test_double_backward_matches_torch(name, fn, arrays):
    _double_backward(fn, arrays)


def test_max_unpool_of_overlapping_windows():
    """Overlapping windows can pick one position twice: it is written once, not added."""
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 7)).astype(np.float32)
    outs = []
    for lib, k in ((dynagrad, 0), (torch, 1)):
        t = _pair(x)[k]
        y, idx = lib.nn.functional.max_pool2d(t, 3, stride=1, return_indices=True)
        u = lib.nn.functional.max_unpool2d(y, idx, 3, stride=1, output_size=(6, 7))
        u.backward(_pair(np.arange(u.numel(), dtype=np.float32).reshape(u.shape))[k])
        outs.append((u.detach().numpy(), t.grad.numpy(), idx.numpy()))
    (du, dg, di), (tu, tg, ti) = outs
    np.testing.assert_array_equal(di, ti)
    np.testing.assert_allclose(du, tu)
    np.testing.assert_allclose(dg, tg, rtol=1e-6)


def test_interpolate_nearest_dtypes():
    x = np.arange(8, dtype=np.uint8).reshape(1, 2, 2, 2)
    d = DF.interpolate(dynagrad.tensor(x), scale_factor=2)
    t = TF.interpolate(torch.from_numpy(x), scale_factor=2)
    assert d.dtype == dynagrad.uint8
    np.testing.assert_array_equal(d.numpy(), t.numpy())
    for lib in (dynagrad, torch):
        with pytest.raises(NotImplementedError):
            lib.nn.functional.interpolate(lib.ones(1, 1, 2, 2, dtype=lib.int64), scale_factor=2)


def test_max_pool2d_fast_path_matches_window_path():
    """kernel == stride on divisible sizes takes a reshape path; the same pooling on a
    copy with one more row (dropped by the floor of the output size) takes the window path."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 8, 6)).astype(np.float32)
    g = rng.standard_normal((4, 5, 4, 3)).astype(np.float32)
    d = dynagrad.tensor(x, requires_grad=True)
    y, i = DF.max_pool2d(d, 2, return_indices=True)
    y.backward(dynagrad.tensor(g))
    xp = np.concatenate([x, np.full((4, 5, 1, 6), -1e9, np.float32)], axis=2)
    d2 = dynagrad.tensor(xp, requires_grad=True)
    y2, i2 = DF.max_pool2d(d2, 2, return_indices=True)
    assert tuple(y2.shape) == tuple(y.shape)
    y2.backward(dynagrad.tensor(g))
    np.testing.assert_array_equal(y.detach().numpy(), y2.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), i2.numpy())   # same W: same flat indices
    np.testing.assert_array_equal(d.grad.numpy(), d2.grad.numpy()[:, :, :8])
    t = torch.from_numpy(x).requires_grad_()
    TF.max_pool2d(t, 2).backward(torch.from_numpy(g))
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize('n', [1, 3])
def test_max_unpool_nd_of_max_pool_indices(n):
    shape = (2, 3, 9) if n == 1 else (2, 2, 5, 4, 6)
    x = np.random.default_rng(4).standard_normal(shape)
    outs = []
    for lib, k in ((dynagrad, 0), (torch, 1)):
        t = _pair(x)[k]
        fn = lib.nn.functional
        y, idx = getattr(fn, f'max_pool{n}d')(t, 3, stride=2, padding=1, return_indices=True)
        u = getattr(fn, f'max_unpool{n}d')(y, idx, 3, stride=2, padding=1,
                                           output_size=shape[2:])
        u.backward(_pair(np.arange(u.numel(), dtype=np.float64).reshape(u.shape))[k])
        outs.append((u.detach().numpy(), t.grad.numpy(), idx.numpy(), u.grad_fn.name()))
    (du, dg, di, dn), (tu, tg, ti, tn) = outs
    np.testing.assert_array_equal(di, ti)
    np.testing.assert_array_equal(du, tu)
    np.testing.assert_array_equal(dg, tg)
    assert dn == tn


@pytest.mark.parametrize('mode,size,align', [
    (mode, size, align) for mode in ('bilinear', 'bicubic', 'lanczos')
    for size, align in (((3, 1), False), ((3, 1), True), ((5, 1), False))
    if not (mode == 'lanczos' and align)])  # lanczos refuses align_corners=True
def test_interpolate_antialias_output_width_one(mode, size, align):
    # torch's antialiased kernel gives wrong values when the output width is 1 and the
    # height shrinks (each output row repeats the first one); its result on the transposed
    # input is right, and is what dynagrad gives without transposing
    a = R.standard_normal((2, 2, 9, 11)).astype(np.float32)
    kw = dict(mode=mode, align_corners=align, antialias=True)
    ref = TF.interpolate(torch.from_numpy(a).transpose(2, 3), size=size[::-1], **kw)
    d, _ = _pair(a)
    out = DF.interpolate(d, size=size, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref.transpose(2, 3).numpy(), atol=1e-6)
    g = R.standard_normal(out.shape).astype(np.float32)
    t = torch.from_numpy(a).transpose(2, 3).requires_grad_()
    TF.interpolate(t, size=size[::-1], **kw).backward(torch.from_numpy(g).transpose(2, 3))
    out.backward(dynagrad.tensor(g))
    np.testing.assert_allclose(d.grad.numpy(), t.grad.transpose(2, 3).numpy(), atol=1e-6)


@pytest.mark.parametrize('dtype', [torch.bfloat16, torch.float16])
def test_interpolate_antialias_half_raises_as_torch(dtype):
    a = torch.randn(1, 1, 6, 6).to(dtype)
    d = dynagrad.tensor(a.float().numpy()).to(getattr(dynagrad, str(dtype)[6:]))
    with pytest.raises(NotImplementedError, match='compute_index_ranges_weights'):
        TF.interpolate(a, size=3, mode='bilinear', antialias=True)
    with pytest.raises(NotImplementedError, match='compute_index_ranges_weights'):
        DF.interpolate(d, size=3, mode='bilinear', antialias=True)
