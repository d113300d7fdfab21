"""Pooling, padding, pixel/channel shuffle, upsampling and fold modules, against torch's.

Each module is built with the same arguments in both libraries; outputs, input gradients,
``repr`` and errors are compared. Fractional max pooling draws its windows from each
library's own generator, so with drawn samples it is checked by its properties (shapes,
outputs are maxima of windows of the kernel size, gradients land on the argmax), and with
fixed ``_random_samples`` against torch's values.
"""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn

import dynagrad
import dynagrad.nn as dnn


def _pair(array, requires_grad=True):
    a = np.array(array, copy=True)
    grad = requires_grad and a.dtype.kind == 'f'
    return (dynagrad.tensor(a.copy(), requires_grad=grad),
            torch.from_numpy(a.copy()).requires_grad_(grad))


def _x(seed, *shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _run_both(name, args, kwargs, inputs, extra=()):
    """Output(s) and input gradients of ``nn.<name>(*args, **kwargs)`` in both libraries."""
    results = []
    for k, lib in enumerate((dynagrad, torch)):
        module = getattr(lib.nn, name)(*args, **kwargs)
        leaves = [_pair(a)[k] for a in inputs]
        more = [_pair(a, False)[k] if isinstance(a, np.ndarray) else a for a in extra]
        out = module(*leaves, *more)
        outs = out if isinstance(out, tuple) else (out,)
        main = outs[0]
        g = np.random.default_rng(7).standard_normal(tuple(main.shape))
        grads = []
        if main.requires_grad:
            main.backward(_pair(g.astype(inputs[0].dtype), False)[k])
            grads = [leaf.grad.numpy() for leaf in leaves]
        results.append(([o.detach().numpy() for o in outs], grads, repr(module)))
    return results


# (module name, constructor args, constructor kwargs, input shapes, extra forward args)
CASES = [
    ('MaxPool3d', (2,), {}, [(2, 3, 4, 6, 4)]),
    ('MaxPool3d', ((3, 2, 2),), dict(stride=(2, 1, 2), padding=1, dilation=(1, 2, 1),
                                     ceil_mode=True), [(1, 2, 5, 7, 6)]),
    ('MaxPool3d', (2,), dict(return_indices=True), [(3, 4, 4, 5)]),
    ('AvgPool3d', (2,), {}, [(2, 3, 4, 6, 4)]),
    ('AvgPool3d', (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False),
     [(1, 2, 5, 7, 6)]),
    ('AvgPool3d', ((2, 3, 2),), dict(stride=1, divisor_override=4), [(2, 3, 4, 5)]),
    ('AdaptiveAvgPool3d', ((3, 4, 2),), {}, [(2, 3, 5, 7, 6)]),
    ('AdaptiveAvgPool3d', ((None, 2, 5),), {}, [(3, 4, 6, 3)]),
    ('AdaptiveAvgPool3d', (1,), {}, [(2, 3, 3, 2, 2)]),
    ('AdaptiveMaxPool1d', (4,), {}, [(2, 3, 9)]),
    ('AdaptiveMaxPool1d', (7,), dict(return_indices=True), [(3, 5)]),
    ('AdaptiveMaxPool3d', ((3, 4, 2),), dict(return_indices=True), [(2, 3, 5, 7, 6)]),
    ('AdaptiveMaxPool3d', ((2, None, 3),), {}, [(3, 4, 6, 5)]),
    ('LPPool1d', (2, 3), {}, [(2, 3, 8)]),
    ('LPPool2d', (2.0, (2, 3)), dict(stride=1, ceil_mode=True), [(2, 3, 5, 6)]),
    ('LPPool3d', (3, 2), {}, [(1, 2, 4, 4, 6)]),
    ('LPPool3d', (1.5, (3, 2, 2)), dict(stride=2, ceil_mode=True), [(1, 2, 5, 6, 5)]),
    ('ChannelShuffle', (3,), {}, [(2, 6, 4, 5)]),
    ('ChannelShuffle', (2,), {}, [(2, 4, 3)]),
    ('ZeroPad1d', (2,), {}, [(2, 3, 5)]),
    ('ZeroPad1d', ((1, -2),), {}, [(3, 6)]),
    ('ZeroPad2d', ((1, 2, 0, 3),), {}, [(2, 3, 4, 5)]),
    ('ZeroPad3d', (1,), {}, [(1, 2, 3, 4, 2)]),
    ('ConstantPad1d', (2, 3.5), {}, [(2, 3, 5)]),
    ('ConstantPad2d', ((1, 0, 2, 1), -1.0), {}, [(3, 4, 5)]),
    ('ConstantPad3d', ((1, 2, 0, 1, 2, 0), 0.5), {}, [(2, 2, 3, 4, 2)]),
    ('ReflectionPad1d', (2,), {}, [(2, 3, 5)]),
    ('ReflectionPad2d', ((1, 2, 2, 0),), {}, [(2, 3, 4, 5)]),
    ('ReflectionPad3d', (1,), {}, [(2, 3, 3, 4)]),
    ('ReplicationPad1d', ((3, 1),), {}, [(3, 4)]),
    ('ReplicationPad2d', (2,), {}, [(2, 3, 4, 5)]),
    ('ReplicationPad3d', ((1, 2, 0, 1, 2, 1),), {}, [(1, 2, 3, 4, 2)]),
    ('CircularPad1d', (2,), {}, [(2, 3, 5)]),
    ('CircularPad2d', ((1, 2, 2, 0),), {}, [(3, 4, 5)]),
    ('CircularPad3d', (1,), {}, [(1, 2, 3, 4, 2)]),
    ('PixelShuffle', (2,), {}, [(2, 8, 3, 2)]),
    ('PixelUnshuffle', (3,), {}, [(1, 2, 6, 3)]),
    ('Upsample', (), dict(scale_factor=2), [(2, 3, 4, 5)]),
    ('Upsample', (), dict(size=(5, 7), mode='bilinear', align_corners=True), [(1, 2, 3, 4)]),
    ('Upsample', (), dict(scale_factor=(1.5, 0.7, 2.0), mode='trilinear'), [(1, 2, 3, 4, 5)]),
    ('Upsample', (), dict(size=(4, 3, 5), mode='nearest'), [(1, 2, 3, 4, 5)]),
    ('Upsample', (), dict(scale_factor=1.7, mode='bicubic', recompute_scale_factor=True),
     [(1, 2, 3, 4)]),
    ('Upsample', (), dict(size=8, mode='linear'), [(2, 3, 5)]),
    ('UpsamplingNearest2d', (), dict(scale_factor=2), [(2, 3, 3, 4)]),
    ('UpsamplingNearest2d', (), dict(size=(5, 3)), [(2, 3, 3, 4)]),
    ('UpsamplingBilinear2d', (), dict(size=5), [(2, 3, 3, 4)]),
    ('UpsamplingBilinear2d', (), dict(scale_factor=(2, 1.5)), [(1, 2, 3, 4)]),
    ('Unfold', (2,), dict(padding=1), [(2, 3, 4, 5)]),
    ('Unfold', ((2, 3),), dict(dilation=(1, 2), stride=2), [(3, 6, 7)]),
    ('Fold', ((4, 5), 2), {}, [(2, 12, 12)]),
    ('Fold', ((5, 6), (2, 3)), dict(padding=1, stride=2), [(6, 9)]),
]


@pytest.mark.parametrize('name,args,kwargs,shapes', CASES,
                         ids=[f'{c[0]}-{i}' for i, c in enumerate(CASES)])
def test_module_matches_torch(name, args, kwargs, shapes):
    inputs = [_x(i, *s) for i, s in enumerate(shapes)]
    (d_outs, d_grads, d_repr), (t_outs, t_grads, t_repr) = _run_both(name, args, kwargs,
                                                                     inputs)
    assert d_repr == t_repr
    assert len(d_outs) == len(t_outs)
    for d, t in zip(d_outs, t_outs):
        assert d.shape == t.shape and d.dtype == t.dtype
        np.testing.assert_allclose(d, t, rtol=1e-10, atol=1e-12)
    assert len(d_grads) == len(t_grads) == len(inputs)
    for d, t in zip(d_grads, t_grads):
        np.testing.assert_allclose(d, t, rtol=1e-10, atol=1e-12)


def test_float32_modules_match_torch():
    for name, args, kwargs, shape in [('MaxPool3d', (2,), {}, (2, 3, 4, 6, 4)),
                                      ('AvgPool3d', (3, 2, 1), {}, (1, 2, 5, 6, 5)),
                                      ('AdaptiveAvgPool3d', ((2, 3, 4),), {}, (2, 2, 5, 6, 7)),
                                      ('Upsample', (), dict(scale_factor=2, mode='trilinear'),
                                       (1, 2, 2, 3, 4))]:
        x = _x(0, *shape, dtype=np.float32)
        (d_outs, d_grads, _), (t_outs, t_grads, _) = _run_both(name, args, kwargs, [x])
        assert d_outs[0].dtype == np.float32
        np.testing.assert_allclose(d_outs[0], t_outs[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(d_grads[0], t_grads[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('n', [1, 2, 3])
def test_max_unpool_modules_invert_max_pool(n):
    shape = {1: (2, 3, 8), 2: (2, 3, 6, 4), 3: (1, 2, 4, 6, 4)}[n]
    x = _x(3, *shape)
    t_pooled, t_idx = getattr(tnn, f'MaxPool{n}d')(2, return_indices=True)(torch.from_numpy(x))
    d_pooled, d_idx = getattr(dnn, f'MaxPool{n}d')(2, return_indices=True)(dynagrad.tensor(x))
    np.testing.assert_array_equal(d_idx.numpy(), t_idx.numpy())
    np.testing.assert_array_equal(d_pooled.numpy(), t_pooled.numpy())
    (d_outs, d_grads, d_repr), (t_outs, t_grads, t_repr) = _run_both(
        f'MaxUnpool{n}d', (2,), {}, [t_pooled.numpy()], extra=(t_idx.numpy(), shape))
    assert d_repr == t_repr
    np.testing.assert_array_equal(d_outs[0], t_outs[0])
    np.testing.assert_array_equal(d_grads[0], t_grads[0])


def test_max_unpool_output_size_and_stride():
    x = _x(4, 1, 2, 5, 7)
    t_pooled, t_idx = tnn.MaxPool2d(3, stride=2, padding=1, return_indices=True)(
        torch.from_numpy(x))
    for size in (None, (5, 7), [1, 2, 5, 7]):
        (d_outs, d_grads, d_repr), (t_outs, t_grads, t_repr) = _run_both(
            'MaxUnpool2d', (3, 2, 1), {}, [t_pooled.numpy()], extra=(t_idx.numpy(), size))
        assert d_repr == t_repr == 'MaxUnpool2d(kernel_size=(3, 3), stride=(2, 2), ' \
                                   'padding=(1, 1))'
        np.testing.assert_array_equal(d_outs[0], t_outs[0])
        np.testing.assert_array_equal(d_grads[0], t_grads[0])


REPRS = [
    ('MaxPool3d', (2,), dict(return_indices=True)),
    ('MaxPool3d', ((1, 2, 3), 1, (0, 1, 1), 2), {}),
    ('AvgPool3d', (2, 1, 1, True, False, 3), {}),
    ('AdaptiveAvgPool3d', ((2, None, 4),), {}),
    ('AdaptiveMaxPool1d', (3, True), {}),
    ('AdaptiveMaxPool3d', ([2, 3, 4],), {}),
    ('MaxUnpool1d', ([2],), dict(stride=1)),
    ('MaxUnpool3d', (2,), dict(padding=(0, 1, 0))),
    ('LPPool1d', (2, 3), {}),
    ('LPPool2d', (1.5, (2, 3), 1, True), {}),
    ('LPPool3d', (2, 3), dict(stride=(1, 2, 1))),
    ('FractionalMaxPool2d', (2,), dict(output_size=3)),
    ('FractionalMaxPool3d', (2,), dict(output_ratio=0.5, return_indices=True)),
    ('ChannelShuffle', (4,), {}),
    ('ZeroPad2d', ([1, 2, 3, 4],), {}),
    ('ConstantPad1d', (2, 0), {}),
    ('ConstantPad3d', (1, 2.5), {}),
    ('ReflectionPad3d', ((1, 0, 1, 0, 1, 0),), {}),
    ('ReplicationPad1d', (3,), {}),
    ('CircularPad2d', (2,), {}),
    ('PixelUnshuffle', (2,), {}),
    ('Upsample', (), {}),
    ('Upsample', (), dict(scale_factor=0)),
    ('Upsample', (), dict(size=[2, 3], mode='bilinear', align_corners=False)),
    ('Upsample', (), dict(scale_factor=(2, 3))),
    ('UpsamplingNearest2d', (4,), {}),
    ('UpsamplingBilinear2d', (), dict(scale_factor=3)),
    ('Fold', (4, (2, 3)), dict(dilation=2, padding=(1, 0), stride=3)),
    ('Unfold', ((2, 2),), dict(stride=2)),
]


@pytest.mark.parametrize('name,args,kwargs', REPRS, ids=[f'{r[0]}-{i}' for i, r in
                                                          enumerate(REPRS)])
def test_repr_and_attributes_match_torch(name, args, kwargs):
    t = getattr(tnn, name)(*args, **kwargs)
    d = getattr(dnn, name)(*args, **kwargs)
    assert repr(d) == repr(t)
    for attr in ('kernel_size', 'stride', 'padding', 'dilation', 'ceil_mode', 'return_indices',
                 'output_size', 'output_ratio', 'norm_type', 'groups', 'value', 'size',
                 'scale_factor', 'mode', 'align_corners', 'recompute_scale_factor',
                 'count_include_pad', 'divisor_override', 'upscale_factor',
                 'downscale_factor', 'name'):
        if hasattr(t, attr):
            assert getattr(d, attr) == getattr(t, attr), attr


def test_class_hierarchy_matches_torch():
    assert issubclass(dnn.ZeroPad2d, dnn.ConstantPad2d)
    assert issubclass(dnn.UpsamplingBilinear2d, dnn.Upsample)
    assert issubclass(dnn.UpsamplingNearest2d, dnn.Upsample)


CONSTRUCTOR_ERRORS = [
    ('FractionalMaxPool2d', (2,), {}, ValueError),
    ('FractionalMaxPool2d', (2,), dict(output_size=3, output_ratio=0.5), ValueError),
    ('FractionalMaxPool2d', (2,), dict(output_ratio=1.5), ValueError),
    ('FractionalMaxPool2d', (2,), dict(output_ratio=0), ValueError),
    ('FractionalMaxPool3d', (2,), dict(output_ratio=(0.5, 0.5, 1)), ValueError),
    ('FractionalMaxPool3d', (2,), {}, ValueError),
    ('ConstantPad2d', (1,), {}, TypeError),
    ('Upsample', (), dict(scale_factor=[2, 3]), TypeError),
]


@pytest.mark.parametrize('name,args,kwargs,exc', CONSTRUCTOR_ERRORS,
                         ids=[f'{c[0]}-{i}' for i, c in enumerate(CONSTRUCTOR_ERRORS)])
def test_constructor_errors_match_torch(name, args, kwargs, exc):
    with pytest.raises(exc) as t_info:
        getattr(tnn, name)(*args, **kwargs)
    with pytest.raises(exc) as d_info:
        getattr(dnn, name)(*args, **kwargs)
    if exc is ValueError:
        assert str(d_info.value) == str(t_info.value)


FORWARD_ERRORS = [
    ('MaxPool3d', (2,), {}, (2, 4, 4), RuntimeError),
    ('AvgPool3d', (3,), {}, (1, 1, 2, 4, 4), RuntimeError),
    ('AdaptiveMaxPool3d', (2,), {}, (4, 4), RuntimeError),
    ('AdaptiveAvgPool3d', ((2, 2),), {}, (1, 2, 4, 4, 4), RuntimeError),
    ('AdaptiveMaxPool1d', (2,), {}, (2, 3, 4, 4), RuntimeError),
    ('LPPool3d', (2, 2), {}, (2, 3, 3), RuntimeError),
    ('FractionalMaxPool2d', (2,), dict(output_size=8), (1, 2, 8, 8), RuntimeError),
    ('FractionalMaxPool3d', (5,), dict(output_size=4), (1, 1, 8, 8, 8), RuntimeError),
    ('FractionalMaxPool2d', (2,), dict(output_size=2), (8, 8), IndexError),
    ('ChannelShuffle', (2,), {}, (2, 3, 4), RuntimeError),
    ('ChannelShuffle', (2,), {}, (3, 4), RuntimeError),
    ('ReflectionPad1d', (1,), {}, (2, 3, 4, 5), NotImplementedError),
    ('ReflectionPad2d', (3,), {}, (1, 3, 3), RuntimeError),
    ('ReplicationPad3d', (1,), {}, (2, 3, 4), NotImplementedError),
    ('CircularPad1d', (1,), {}, (2, 3, 4, 5), ValueError),
    ('CircularPad2d', (1,), {}, (2,), ValueError),
    ('CircularPad3d', (1,), {}, (2, 3, 4), ValueError),
    ('CircularPad1d', (4,), {}, (1, 2, 3), RuntimeError),
    ('ZeroPad2d', ((1, 2, 3),), {}, (2, 3, 4), RuntimeError),
    ('ConstantPad2d', (1, 0.0), {}, (2,), RuntimeError),
    ('PixelShuffle', (2,), {}, (2, 3, 8, 9), RuntimeError),
    ('PixelUnshuffle', (2,), {}, (1, 1, 3, 4), RuntimeError),
    ('Upsample', (), {}, (1, 2, 3, 4), ValueError),
    ('Upsample', (), dict(size=2), (2, 3), NotImplementedError),
    ('Upsample', (), dict(size=2, scale_factor=2), (1, 2, 3), ValueError),
    ('Upsample', (), dict(size=4, mode='trilinear'), (1, 2, 3, 4), NotImplementedError),
    ('UpsamplingBilinear2d', (), dict(size=4), (1, 2, 3), NotImplementedError),
    ('Fold', (3, 2), {}, (2, 3, 8, 9), RuntimeError),
    ('Unfold', (2,), {}, (3, 4), IndexError),
]


@pytest.mark.parametrize('name,args,kwargs,shape,exc', FORWARD_ERRORS,
                         ids=[f'{c[0]}-{i}' for i, c in enumerate(FORWARD_ERRORS)])
def test_forward_errors_match_torch(name, args, kwargs, shape, exc):
    x = _x(0, *shape, dtype=np.float32)
    d, t = _pair(x, False)
    with pytest.raises(exc) as t_info:
        getattr(tnn, name)(*args, **kwargs)(t)
    with pytest.raises(exc) as d_info:
        getattr(dnn, name)(*args, **kwargs)(d)
    for base in (IndexError, TypeError, ValueError, NotImplementedError):
        assert isinstance(d_info.value, base) == isinstance(t_info.value, base), (
            f'torch raised {type(t_info.value).__name__}, dynagrad {type(d_info.value).__name__}')
    if exc is ValueError:
        assert str(d_info.value) == str(t_info.value)


def test_upsampling_bilinear2d_warns_as_torch_does():
    """torch 2.13 warns neither at construction nor in forward; neither do we."""
    x = _x(1, 1, 2, 3, 4)
    caught = {}
    for lib in (dynagrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            m = lib.nn.UpsamplingBilinear2d(scale_factor=2)
            m(_pair(x, False)[0 if lib is dynagrad else 1])
        caught[lib.__name__] = [str(a.message) for a in w]
    assert caught['dynagrad'] == caught['torch']
    assert dnn.UpsamplingBilinear2d(size=3).align_corners is True


@pytest.mark.parametrize('name,kwargs', [('upsample', dict(scale_factor=2)),
                                         ('upsample_nearest', dict(size=(3, 5))),
                                         ('upsample_bilinear', dict(scale_factor=2))])
def test_deprecated_upsample_functions_warn_as_torch(name, kwargs):
    x = _x(2, 1, 2, 2, 3)
    caught, values = {}, {}
    for k, lib in enumerate((dynagrad, torch)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            y = getattr(lib.nn.functional, name)(_pair(x, False)[k], **kwargs)
        caught[k] = [(a.category, str(a.message)) for a in w]
        values[k] = y.numpy()
    assert caught[0] == caught[1] and len(caught[0]) == 1
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)


# -- fractional max pooling -------------------------------------------------------------------

@pytest.mark.parametrize('n', [2, 3])
def test_fractional_with_fixed_samples_matches_torch(n):
    shape = (2, 3, 9, 8) if n == 2 else (2, 2, 7, 8, 6)
    x = _x(5, *shape)
    samples = np.random.default_rng(6).random((2, shape[1], n))
    kw = dict(output_size=(4,) * n, return_indices=True, _random_samples=None)
    results = []
    for k, lib in enumerate((dynagrad, torch)):
        kw['_random_samples'] = _pair(samples, False)[k]
        m = getattr(lib.nn, f'FractionalMaxPool{n}d')(2, **kw)
        leaf = _pair(x)[k]
        y, idx = m(leaf)
        y.backward(_pair(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)),
                         False)[k])
        results.append((y.detach().numpy(), idx.numpy(), leaf.grad.numpy(),
                        list(dict(m.named_buffers())), y.grad_fn.name()))
    (dy, di, dg, db, dn_), (ty, ti, tg, tb, tn_) = results
    np.testing.assert_array_equal(di, ti)
    np.testing.assert_array_equal(dy, ty)
    np.testing.assert_array_equal(dg, tg)
    assert db == tb == ['_random_samples'] and dn_ == tn_


@pytest.mark.parametrize('n,kernel,kwargs,shape', [
    (2, 2, dict(output_size=(4, 5)), (2, 3, 10, 12)),
    (2, (3, 2), dict(output_ratio=(0.5, 0.7)), (3, 11, 9)),
    (3, 2, dict(output_size=3), (1, 2, 7, 8, 6)),
    (3, (2, 3, 2), dict(output_ratio=0.5), (2, 9, 10, 8)),
])
def test_fractional_drawn_windows(n, kernel, kwargs, shape):
    """Outputs are maxima of kernel-sized windows; gradients go to each window's argmax."""
    k = (kernel,) * n if isinstance(kernel, int) else kernel
    sizes, lead = shape[-n:], shape[:-n]
    m = getattr(dnn, f'FractionalMaxPool{n}d')(kernel, return_indices=True, **kwargs)
    # 1. On an input increasing along every axis a window's max sits at its far corner, so
    #    the indices give each window's start.
    ramp = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    dynagrad.manual_seed(11)
    _, idx = m(dynagrad.tensor(ramp))
    out = tuple(idx.shape[-n:])
    if 'output_size' in kwargs:
        size = kwargs['output_size']
        assert out == ((size,) * n if isinstance(size, int) else tuple(size))
    else:
        r = kwargs['output_ratio']
        assert out == tuple(int(sz * (r if isinstance(r, float) else r[i]))
                            for i, sz in enumerate(sizes))
    starts = [c - (kk - 1) for c, kk in zip(np.unravel_index(idx.numpy(), sizes), k)]
    for axis in range(n):
        st = starts[axis]
        # a start depends on the plane and the output position along its own axis only
        first = st[(Ellipsis,) + tuple(slice(None) if a == axis else slice(0, 1)
                                       for a in range(n))]
        assert np.all(st == first)
        assert np.all(st >= 0) and np.all(st <= sizes[axis] - k[axis])
        assert np.all(np.diff(st, axis=axis - n) >= 1)          # windows move forward
        assert np.all(np.take(st, -1, axis=axis - n) == sizes[axis] - k[axis])
    # 2. Same draws on a shuffled input: each output is the max of its window, at its index.
    x = np.random.default_rng(12).permutation(np.prod(shape)).reshape(shape).astype(float)
    leaf = dynagrad.tensor(x, requires_grad=True)
    dynagrad.manual_seed(11)
    y, idx = m(leaf)
    yv, iv = y.detach().numpy(), idx.numpy()
    for pos in np.ndindex(*yv.shape):
        window = tuple(slice(starts[a][pos], starts[a][pos] + k[a]) for a in range(n))
        block = x[pos[:-n] + window]
        assert yv[pos] == block.max()
        assert x[pos[:-n] + np.unravel_index(iv[pos], sizes)] == yv[pos]
    # 3. The gradient of each output goes to its argmax (and only there).
    g = np.random.default_rng(13).standard_normal(yv.shape)
    y.backward(dynagrad.tensor(g))
    expected = np.zeros((int(np.prod(lead)), int(np.prod(sizes))))
    rows = np.arange(expected.shape[0])[:, None]
    np.add.at(expected, (rows, iv.reshape(expected.shape[0], -1)),
              g.reshape(expected.shape[0], -1))
    np.testing.assert_array_equal(leaf.grad.numpy(), expected.reshape(shape))


def test_fractional_draws_from_default_generator():
    x = dynagrad.tensor(_x(2, 2, 3, 12, 12))
    m = dnn.FractionalMaxPool2d(3, output_size=5, return_indices=True)
    dynagrad.manual_seed(3)
    _, a = m(x)
    _, b = m(x)
    dynagrad.manual_seed(3)
    _, c = m(x)
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())


def test_fractional_samples_buffer_moves_with_state_dict():
    s = dynagrad.rand(1, 2, 2, dtype=dynagrad.float64)
    m = dnn.FractionalMaxPool2d(2, output_size=3, _random_samples=s)
    assert list(m.state_dict()) == ['_random_samples']
    assert list(dnn.FractionalMaxPool2d(2, output_size=3).state_dict()) == []


# -- channel shuffle: second derivatives ------------------------------------------------------

def test_channel_shuffle_double_backward_matches_torch():
    x = _x(8, 2, 6, 3)
    results = []
    for k, lib in enumerate((dynagrad, torch)):
        leaf = _pair(x)[k]
        y = lib.nn.ChannelShuffle(3)(leaf)
        g = _pair(_x(9, 2, 6, 3))[k]
        gx, = lib.autograd.grad(y, leaf, g, create_graph=True)
        (gx * _pair(_x(10, 2, 6, 3), False)[k]).sum().backward()
        results.append((y.detach().numpy(), gx.detach().numpy(), g.grad.numpy(),
                        y.grad_fn.name(), gx.grad_fn.name()))
    for d, t in zip(*results):
        if isinstance(d, str):
            assert d == t
        else:
            np.testing.assert_array_equal(d, t)
