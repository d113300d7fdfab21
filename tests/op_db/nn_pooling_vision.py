"""Rows for dynagrad.nn.functional: pooling_vision.

Shapes stay small; the samples of 12 elements or fewer (8 for double gradients) also run
gradcheck and gradgradcheck in float64. Max-pooling inputs are random floats (no ties),
so finite differences stay away from the argmax switching.
"""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def F(name):
    """The callable ``lib.nn.functional.<name>(*args, **kwargs)`` for both libraries."""
    def fn(lib, *args, **kwargs):
        return getattr(lib.nn.functional, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


# -- pooling -------------------------------------------------------------------------------

def max_pool2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 6, 8), 2), desc='k2_fast_path'),
        Sample((R(rng, 2, 3, 7, 8), 2), desc='k2_odd_height'),
        Sample((R(rng, 1, 1, 3, 4), 2), dict(stride=1), desc='small_overlap'),
        Sample((R(rng, 1, 1, 3, 4), (2, 3)), dict(stride=(1, 2), padding=(1, 1)),
               desc='small_pad'),
        Sample((R(rng, 2, 5, 5), 3), dict(stride=2, padding=1), desc='unbatched_pad'),
        Sample((R(rng, 2, 3, 7, 8), (3, 2)), dict(stride=(2, 1), padding=1, dilation=(2, 1),
                                                    ceil_mode=True), desc='dilation_ceil'),
        Sample((R(rng, 1, 2, 5, 5), 2), dict(ceil_mode=True, return_indices=True),
               desc='ceil_indices'),
        Sample((R(rng, 2, 2, 4, 6), 2), dict(return_indices=True), desc='fast_indices'),
        Sample((R(rng, 1, 1, 3, 4), 3), dict(stride=2, padding=1, return_indices=True),
               desc='small_indices'),
        Sample((nc(R(rng, 2, 3, 6, 5), TR), 2), desc='noncontig_T'),
        Sample((nc(R(rng, 2, 3, 5, 12), STEP), 3), dict(stride=2), desc='noncontig_step'),
        Sample((F64(rng, 2, 2, 5, 4), 2), dict(stride=1, padding=1), desc='f64'),
        Sample((I64(rng, 1, 2, 4, 5), 2), dict(padding=1), desc='int64'),
    ]


def pool2d_errors(rng, rank_error=RuntimeError):
    return [
        ErrorSample((R(rng, 3, 4), 2), exc=rank_error, desc='2d_input'),
        ErrorSample((R(rng, 1, 1, 4, 4), 2), dict(padding=2), desc='pad_too_big'),
        ErrorSample((R(rng, 1, 1, 2, 2), 3), desc='output_too_small'),
        ErrorSample((R(rng, 1, 1, 4, 4), 0), desc='zero_kernel'),
        ErrorSample((R(rng, 1, 1, 4, 4), 2), dict(stride=0), desc='zero_stride'),
        ErrorSample((R(rng, 1, 1, 4, 4), (2, 2, 2)), desc='kernel_3_tuple'),
    ]


def max_pool1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 8), 2), desc='k2'),
        Sample((R(rng, 1, 2, 5), 2), dict(stride=1), desc='small_overlap'),
        Sample((R(rng, 3, 7), 3), dict(stride=2, padding=1), desc='unbatched_pad'),
        Sample((R(rng, 2, 2, 9), 2), dict(dilation=2, ceil_mode=True, return_indices=True),
               desc='dilation_ceil_indices'),
        Sample((nc(R(rng, 2, 8, 3), TR), 3), dict(stride=2), desc='noncontig_T'),
        Sample((F64(rng, 2, 2, 7), 3), dict(stride=2, padding=1), desc='f64'),
    ]


def pool1d_errors(rng):
    return [
        ErrorSample((R(rng, 1, 2, 3, 4), 2), desc='4d_input'),
        ErrorSample((R(rng, 1, 1, 4), 2), dict(padding=2), desc='pad_too_big'),
        ErrorSample((R(rng, 1, 1, 2), 3), desc='output_too_small'),
    ]


def avg_pool2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 6, 8), 2), desc='k2_fast_path'),
        Sample((R(rng, 1, 1, 3, 4), 2), dict(stride=1), desc='small_overlap'),
        Sample((R(rng, 1, 1, 3, 4), 3), dict(stride=2, padding=1), desc='small_pad'),
        Sample((R(rng, 1, 1, 3, 4), 3), dict(stride=2, padding=1, count_include_pad=False),
               desc='small_exclude_pad'),
        Sample((R(rng, 2, 3, 7, 8), 3), dict(stride=2, padding=1, ceil_mode=True),
               desc='ceil'),
        Sample((R(rng, 2, 3, 7, 8), (3, 2)), dict(stride=2, padding=1, ceil_mode=True,
                                                    count_include_pad=False),
               desc='ceil_exclude_pad'),
        Sample((R(rng, 2, 5, 6), 3), dict(stride=(2, 1), padding=1, divisor_override=5),
               desc='unbatched_divisor'),
        Sample((nc(R(rng, 2, 3, 6, 5), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 2, 2, 5, 4), 2), dict(stride=1, padding=1), desc='f64'),
        Sample((I64(rng, 1, 2, 4, 5), 2), dict(padding=1), desc='int64_truncates'),
    ]


def avg_pool1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 8), 2), desc='k2'),
        Sample((R(rng, 1, 2, 5), 3), dict(stride=1, padding=1), desc='small_pad'),
        Sample((R(rng, 3, 7), 3), dict(stride=2, padding=1, count_include_pad=False,
                                       ceil_mode=True), desc='unbatched_exclude_ceil'),
        Sample((nc(R(rng, 2, 8, 3), TR), 3), dict(stride=2), desc='noncontig_T'),
        Sample((F64(rng, 2, 2, 7), 3), dict(stride=2, padding=1), desc='f64'),
    ]


def adaptive_avg2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 7, 9), (3, 4)), desc='shrink'),
        Sample((R(rng, 2, 3, 5, 4), 7), desc='grow'),
        Sample((R(rng, 1, 1, 3, 4), (2, 3)), desc='small'),
        Sample((R(rng, 1, 2, 3, 2), 1), desc='global_mean'),
        Sample((R(rng, 3, 6, 5), (None, 2)), desc='unbatched_none'),
        # (torch's backward refuses an empty output: forward only)
        Sample((R(rng, 2, 3, 4, 4), (0, 2)), desc='empty_output', requires_grad=False),
        Sample((nc(R(rng, 2, 3, 6, 5), TR), 4), desc='noncontig_T'),
        Sample((F64(rng, 2, 2, 5, 6), (2, 4)), desc='f64'),
    ]


def adaptive_errors(rng):
    return [
        ErrorSample((R(rng, 4, 4), 2), desc='2d_input'),
        ErrorSample((R(rng, 1, 1, 4, 4), (2, 2, 2)), desc='output_size_3'),
        ErrorSample((I64(rng, 1, 1, 4, 4), 2), desc='int_input'),
    ]


def adaptive_avg1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 9), 4), desc='shrink'),
        Sample((R(rng, 1, 2, 5), 3), desc='small'),
        Sample((R(rng, 3, 4), 7), desc='unbatched_grow'),
        Sample((F64(rng, 2, 2, 7), 3), desc='f64'),
    ]


def adaptive_max2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 7, 9), (3, 4)), desc='shrink'),
        Sample((R(rng, 2, 3, 5, 4), 7), desc='grow'),
        Sample((R(rng, 1, 1, 3, 4), (2, 3)), dict(return_indices=True), desc='small_indices'),
        Sample((R(rng, 3, 6, 5), (None, 2)), desc='unbatched_none'),
        Sample((nc(R(rng, 2, 3, 6, 5), TR), 4), dict(return_indices=True),
               desc='noncontig_T_indices'),
        Sample((F64(rng, 2, 2, 5, 6), (2, 4)), desc='f64'),
    ]


def adaptive_max1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 9), 4), desc='shrink'),
        Sample((R(rng, 1, 2, 5), 3), dict(return_indices=True), desc='small_indices'),
        Sample((F64(rng, 2, 2, 7), 3), desc='f64'),
    ]


def _pool_indices(rng, shape, k):
    """Indices a ``k``-by-``k`` max pool (stride k) of an input with spatial ``shape``
    could return, for an output of shape ``shape[:-2] + (H // k, W // k)``."""
    *lead, H, W = shape
    Ho, Wo = H // k, W // k
    a = rng.integers(0, k, tuple(lead) + (Ho, Wo, 2))
    h = np.arange(Ho).reshape(Ho, 1) * k + a[..., 0]
    w = np.arange(Wo) * k + a[..., 1]
    return (h * W + w).astype(np.int64)


def max_unpool2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 3, 4), _pool_indices(rng, (2, 3, 6, 8), 2), 2), desc='k2'),
        Sample((R(rng, 1, 1, 2, 3), _pool_indices(rng, (1, 1, 4, 6), 2), 2), desc='small'),
        Sample((R(rng, 2, 2, 2), _pool_indices(rng, (2, 4, 5), 2), 2),
               dict(output_size=(4, 5)), desc='unbatched_output_size'),
        Sample((F64(rng, 1, 2, 2, 2), _pool_indices(rng, (1, 2, 6, 6), 3), 3), desc='f64'),
    ]


def max_unpool2d_errors(rng):
    return [
        ErrorSample((R(rng, 1, 1, 2, 2), np.full((1, 1, 2, 2), 99, np.int64), 2),
                    desc='index_out_of_range'),
        ErrorSample((R(rng, 1, 1, 2, 2), np.zeros((1, 1, 2, 3), np.int64), 2),
                    desc='indices_shape'),
        ErrorSample((R(rng, 1, 1, 2, 2), np.zeros((1, 1, 2, 2), np.int64), 2),
                    dict(output_size=(9, 9)), exc=ValueError, desc='bad_output_size'),
    ]


def lp_pool2d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 6, 8), 2, 2), desc='p2_k2'),
        Sample((POS(rng, 1, 1, 3, 4), 3, 2), dict(stride=1), desc='small_p3'),
        Sample((POS(rng, 2, 3, 7, 8), 1.5, (3, 2)), dict(stride=2, ceil_mode=True),
               desc='p1.5_ceil'),
        Sample((POS(rng, 2, 2, 5, 4).astype(np.float64), 2, 2), desc='f64'),
    ]


def lp_pool1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 8), 2, 2), desc='p2_k2'),
        Sample((POS(rng, 1, 2, 5), 3, 2), dict(stride=1), desc='small_p3'),
        Sample((POS(rng, 2, 2, 7).astype(np.float64), 2, 3), dict(stride=2), desc='f64'),
    ]


# -- vision ----------------------------------------------------------------------------------

def pad_samples(mode):
    def gen(rng):
        kw = dict(mode=mode)
        s = [
            Sample((R(rng, 2, 3, 5), (1, 2)), kw, desc='last_dim'),
            Sample((R(rng, 2, 3, 4, 5), (1, 2, 2, 1)), kw, desc='last_two'),
            Sample((R(rng, 1, 3, 4), (2, 1)), kw, desc='small_1d'),
            Sample((R(rng, 1, 3, 4), (1, 1, 1, 0)), kw, desc='small_2d_unbatched'),
            Sample((R(rng, 2, 3, 6), (-1, 2)), kw, desc='crop_left'),
            Sample((R(rng, 2, 4, 6), (2, -3, -1, 1)), kw, desc='crop_mixed'),
            Sample((nc(R(rng, 2, 3, 5, 4), TR), (1, 1, 2, 2)), kw, desc='noncontig_T'),
            Sample((F64(rng, 2, 3, 4), (2, 1)), kw, desc='f64'),
            Sample((R(rng, 1, 2, 3, 4, 5), (1, 1, 1, 0, 0, 1)), kw, desc='last_three'),
        ]
        if mode == 'constant':
            s += [
                Sample((R(rng, 2, 3, 4, 5), (1, 2)), dict(value=1.5), desc='value'),
                Sample((R(rng, 4), (1, 2)), desc='1d_input'),
                Sample((R(rng, 2, 3, 4), (1, 0, 0, 2, 1, 1)), desc='all_dims'),
                Sample((R(rng, 0, 3), (1, 1)), desc='empty_batch'),
                Sample((I64(rng, 2, 3), (1, 1)), dict(value=7), desc='int64'),
            ]
        else:
            s += [Sample((R(rng, 3, 4), (1, 2)), kw, desc='2d_input')]
        return s
    return gen


def pad_errors(mode):
    def gen(rng):
        kw = dict(mode=mode)
        e = [
            ErrorSample((R(rng, 2, 3), (1, 1, 1)), kw, desc='odd_length'),
            ErrorSample((R(rng, 2, 3), (1, 1, 1, 1, 1, 1)), kw, desc='too_long'),
            ErrorSample((R(rng, 2, 3), (-2, -2)), kw, desc='negative_size'),
        ]
        if mode == 'reflect':
            e.append(ErrorSample((R(rng, 1, 2, 3), (3, 0)), kw, desc='reflect_too_big'))
        if mode == 'circular':
            e.append(ErrorSample((R(rng, 1, 2, 3), (4, 0)), kw, desc='wraps_twice'))
        if mode != 'constant':
            e += [ErrorSample((R(rng, 1, 2, 3, 4), (1, 1)), kw, exc=NotImplementedError,
                              desc='unsupported_dims'),
                  ErrorSample((R(rng, 1, 2, 3), (1, 1)), dict(mode=mode, value=2.0),
                              desc='value_with_mode')]
        else:
            e.append(ErrorSample((R(rng, 1, 2, 3), (1, 1)), dict(mode='wrap'),
                                 exc=NotImplementedError, desc='unknown_mode'))
        return e
    return gen


def interp_samples(mode):
    spatial = {'linear': 1, 'bilinear': 2, 'bicubic': 2, 'trilinear': 3}.get(mode)
    align = mode in ('linear', 'bilinear', 'bicubic', 'trilinear')

    def gen(rng):
        s = []
        if spatial in (None, 2):
            s += [
                Sample((R(rng, 2, 3, 4, 5),), dict(scale_factor=2, mode=mode), desc='2d_x2'),
                Sample((R(rng, 2, 3, 5, 7),), dict(scale_factor=0.6, mode=mode),
                       desc='2d_shrink'),
                Sample((R(rng, 1, 2, 3, 4),), dict(size=(5, 7), mode=mode), desc='2d_size'),
                Sample((R(rng, 1, 1, 2, 3),), dict(size=(3, 4), mode=mode), desc='2d_small'),
                Sample((R(rng, 1, 2, 3, 4),), dict(scale_factor=(1.7, 0.8), mode=mode),
                       desc='2d_scale_tuple'),
                Sample((R(rng, 1, 2, 3, 4),), dict(scale_factor=1.7, mode=mode,
                                                   recompute_scale_factor=True),
                       desc='2d_recompute'),
                Sample((nc(R(rng, 2, 3, 5, 4), TR),), dict(size=6, mode=mode),
                       desc='2d_noncontig_T'),
                Sample((F64(rng, 1, 2, 3, 4),), dict(scale_factor=1.5, mode=mode),
                       desc='2d_f64'),
            ]
            if align:
                s += [Sample((R(rng, 1, 2, 3, 4),), dict(size=(5, 7), mode=mode,
                                                         align_corners=True),
                             desc='2d_align_corners'),
                      Sample((R(rng, 1, 1, 2, 3),), dict(scale_factor=1.5, mode=mode,
                                                         align_corners=True),
                             desc='2d_small_align'),
                      Sample((F64(rng, 1, 2, 4, 3),), dict(size=(1, 5), mode=mode,
                                                           align_corners=True),
                             desc='2d_f64_align_size1')]
            if mode in ('bilinear', 'bicubic'):
                # antialiasing widens the filter by the downsampling factor
                s += [Sample((R(rng, 2, 2, 9, 11),), dict(size=(4, 3), mode=mode,
                                                          antialias=True), desc='aa_shrink'),
                      Sample((R(rng, 1, 2, 7, 8),), dict(scale_factor=(0.45, 1.6), mode=mode,
                                                         antialias=True), desc='aa_mixed'),
                      Sample((R(rng, 1, 1, 8, 9),), dict(size=(3, 5), mode=mode,
                                                         align_corners=True, antialias=True),
                             desc='aa_align_corners'),
                      Sample((R(rng, 1, 2, 6, 7),), dict(size=1, mode=mode, antialias=True),
                             desc='aa_size1'),
                      Sample((F64(rng, 1, 2, 10, 12),), dict(scale_factor=0.3, mode=mode,
                                                             antialias=True,
                                                             recompute_scale_factor=True),
                             desc='aa_f64_recompute')]
        if spatial in (None, 1):
            s += [
                Sample((R(rng, 2, 3, 5),), dict(scale_factor=2.5, mode=mode), desc='1d_x2.5'),
                Sample((R(rng, 1, 2, 6),), dict(size=4, mode=mode), desc='1d_small_shrink'),
                Sample((nc(R(rng, 2, 6, 3), TR),), dict(size=[9], mode=mode),
                       desc='1d_noncontig_T'),
                Sample((F64(rng, 2, 2, 5),), dict(scale_factor=1.3, mode=mode), desc='1d_f64'),
            ]
            if align:
                s.append(Sample((R(rng, 1, 2, 5),), dict(size=8, mode=mode, align_corners=True),
                                desc='1d_align_corners'))
        if spatial in (None, 3):
            s += [
                Sample((R(rng, 2, 2, 3, 4, 5),), dict(scale_factor=(1.5, 0.7, 2), mode=mode),
                       desc='3d_scale'),
                Sample((R(rng, 1, 1, 2, 2, 3),), dict(size=(3, 1, 4), mode=mode),
                       desc='3d_small'),
                Sample((nc(R(rng, 1, 2, 3, 5, 4), TR),), dict(size=4, mode=mode),
                       desc='3d_noncontig_T'),
                Sample((F64(rng, 1, 2, 2, 3, 4),), dict(scale_factor=1.5, mode=mode),
                       desc='3d_f64'),
            ]
            if align:
                s.append(Sample((R(rng, 1, 2, 2, 3, 4),), dict(size=(3, 5, 2), mode=mode,
                                                               align_corners=True),
                                desc='3d_align_corners'))
        return s
    return gen


def interp_errors(mode):
    spatial = {'linear': 1, 'bilinear': 2, 'bicubic': 2, 'trilinear': 3}.get(mode)

    def gen(rng):
        x = {1: R(rng, 1, 2, 3), 3: R(rng, 1, 2, 3, 4, 2)}.get(spatial, R(rng, 1, 2, 3, 4))
        e = [
            ErrorSample((x,), dict(mode=mode), exc=ValueError, desc='no_size'),
            ErrorSample((x,), dict(size=5, scale_factor=2, mode=mode), exc=ValueError,
                        desc='size_and_scale'),
            ErrorSample((x,), dict(size=(2, 3) if spatial == 3 else (2, 3, 4), mode=mode),
                        exc=ValueError, desc='size_length'),
            ErrorSample((R(rng, 3, 4),), dict(size=5, mode=mode), exc=NotImplementedError,
                        desc='2d_input'),
        ]
        if spatial is None:
            e.append(ErrorSample((x,), dict(size=5, mode=mode, align_corners=True),
                                 exc=ValueError, desc='align_corners_not_allowed'))
        else:
            wrong = R(rng, 1, 2, 3) if spatial == 3 else \
                R(rng, 1, 2, 3, 4) if spatial == 1 else R(rng, 1, 2, 3)
            e.append(ErrorSample((wrong,), dict(size=5, mode=mode), exc=NotImplementedError,
                                 desc='wrong_rank'))
        if spatial != 2:
            e.append(ErrorSample((x,), dict(size=2, mode=mode, antialias=True),
                                 exc=ValueError, desc='antialias_mode'))
        else:
            e.append(ErrorSample((R(rng, 1, 2, 3),), dict(size=5, mode=mode, antialias=True),
                                 exc=ValueError, desc='antialias_rank'))
        return e
    return gen


def lanczos_samples(rng):
    """Lanczos-3 exists only as PyTorch's antialiased 2-D (Pillow) resampling."""
    aa = dict(mode='lanczos', antialias=True)
    return [Sample((R(rng, 2, 2, 9, 11),), dict(size=(4, 3), **aa), desc='shrink'),
            Sample((R(rng, 1, 2, 7, 8),), dict(scale_factor=(0.45, 1.6), **aa), desc='mixed'),
            Sample((R(rng, 1, 1, 4, 5),), dict(size=(9, 11), **aa), desc='grow'),
            Sample((R(rng, 1, 2, 6, 7),), dict(size=1, **aa), desc='size1'),
            Sample((nc(R(rng, 1, 2, 7, 6), TR),), dict(size=3, **aa), desc='noncontig_T'),
            Sample((F64(rng, 1, 2, 10, 12),), dict(scale_factor=0.3, recompute_scale_factor=True,
                                                   **aa), desc='f64_recompute')]


def lanczos_errors(rng):
    x = R(rng, 1, 2, 6, 7)
    return [ErrorSample((x,), dict(size=3, mode='lanczos'), exc=ValueError,
                        desc='needs_antialias'),
            ErrorSample((x,), dict(size=3, mode='lanczos', antialias=True, align_corners=True),
                        exc=ValueError, desc='align_corners'),
            ErrorSample((R(rng, 1, 2, 6),), dict(size=3, mode='lanczos'),
                        exc=NotImplementedError, desc='1d_input'),
            ErrorSample((R(rng, 1, 2, 3, 4, 5),), dict(size=3, mode='lanczos', antialias=True),
                        exc=ValueError, desc='antialias_rank'),
            ErrorSample((x,), dict(mode='lanczos', antialias=True), exc=ValueError,
                        desc='no_size')]


def grid(rng, *shape, lim=1.3):
    """Sampling points in [-lim, lim] (beyond [-1, 1]: the padding modes matter)."""
    return rng.uniform(-lim, lim, shape).astype(np.float32)


def grid_sample_samples(rng):
    s = []
    for pm in ('zeros', 'border', 'reflection'):
        for ac in (False, True):
            s.append(Sample((R(rng, 2, 3, 4, 5), grid(rng, 2, 3, 4, 2)),
                            dict(padding_mode=pm, align_corners=ac),
                            desc=f'bilinear_{pm}_{"ac" if ac else "noac"}'))
            s.append(Sample((R(rng, 1, 1, 2, 3), grid(rng, 1, 1, 1, 2)),
                            dict(padding_mode=pm, align_corners=ac),
                            desc=f'small_{pm}_{"ac" if ac else "noac"}'))
            s.append(Sample((R(rng, 2, 2, 4, 3), grid(rng, 2, 2, 3, 2)),
                            dict(mode='nearest', padding_mode=pm, align_corners=ac),
                            desc=f'nearest_{pm}_{"ac" if ac else "noac"}'))
    s += [
        Sample((R(rng, 2, 3, 4, 5), grid(rng, 2, 3, 4, 2, lim=3.5)),
               dict(padding_mode='reflection'), desc='reflection_far'),
        Sample((nc(R(rng, 2, 3, 5, 4), TR), grid(rng, 2, 2, 3, 2)), dict(align_corners=False),
               desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 3, 4), grid(rng, 1, 2, 2, 2).astype(np.float64)),
               dict(align_corners=True), desc='f64'),
    ]
    # volumetric: (N, C, D, H, W) sampled at (N, Do, Ho, Wo, 3)
    for mode in ('bilinear', 'nearest'):
        for pm in ('zeros', 'border', 'reflection'):
            for ac in (False, True):
                s.append(Sample((R(rng, 2, 2, 3, 4, 3), grid(rng, 2, 2, 3, 2, 3)),
                                dict(mode=mode, padding_mode=pm, align_corners=ac),
                                desc=f'3d_{mode}_{pm}_{"ac" if ac else "noac"}'))
    s += [
        Sample((R(rng, 1, 1, 1, 2, 3), grid(rng, 1, 1, 2, 1, 3)), dict(align_corners=False),
               desc='3d_depth1'),
        Sample((R(rng, 1, 2, 3, 4, 2), grid(rng, 1, 2, 2, 2, 3, lim=3.5)),
               dict(padding_mode='reflection', align_corners=False), desc='3d_reflection_far'),
        Sample((nc(R(rng, 1, 2, 4, 3, 2), TR), grid(rng, 1, 2, 1, 3, 3)),
               dict(align_corners=True), desc='3d_noncontig_T'),
        Sample((F64(rng, 1, 2, 2, 3, 2), grid(rng, 1, 2, 2, 2, 3).astype(np.float64)),
               dict(align_corners=False), desc='3d_f64'),
    ]
    # bicubic (2-d only): 4 x 4 taps, each moved in by the padding mode
    for pm in ('zeros', 'border', 'reflection'):
        for ac in (False, True):
            s.append(Sample((R(rng, 2, 2, 4, 5), grid(rng, 2, 3, 2, 2)),
                            dict(mode='bicubic', padding_mode=pm, align_corners=ac),
                            desc=f'bicubic_{pm}_{"ac" if ac else "noac"}'))
    s += [
        Sample((R(rng, 1, 2, 3, 4), grid(rng, 1, 2, 3, 2, lim=3.5)),
               dict(mode='bicubic', padding_mode='reflection', align_corners=False),
               desc='bicubic_reflection_far'),
        Sample((R(rng, 1, 1, 1, 2), grid(rng, 1, 2, 2, 2)),
               dict(mode='bicubic', padding_mode='border', align_corners=True),
               desc='bicubic_tiny'),
        Sample((F64(rng, 1, 2, 3, 4), grid(rng, 1, 2, 2, 2).astype(np.float64)),
               dict(mode='bicubic', align_corners=False), desc='bicubic_f64'),
    ]
    return s


def grid_sample_errors(rng):
    return [
        ErrorSample((R(rng, 1, 1, 3, 3), grid(rng, 1, 2, 2, 3)), desc='grid_last_dim'),
        ErrorSample((R(rng, 2, 1, 3, 3), grid(rng, 1, 2, 2, 2)), desc='batch_mismatch'),
        ErrorSample((R(rng, 1, 1, 3, 3), grid(rng, 1, 2, 2, 2).astype(np.float64)),
                    desc='dtype_mismatch'),
        ErrorSample((R(rng, 1, 1, 3, 3), grid(rng, 1, 2, 2, 2)), dict(mode='linear'),
                    exc=ValueError, desc='bad_mode'),
        ErrorSample((R(rng, 1, 1, 3, 3), grid(rng, 1, 2, 2, 2)), dict(padding_mode='wrap'),
                    exc=ValueError, desc='bad_padding_mode'),
        ErrorSample((R(rng, 1, 3, 3), grid(rng, 1, 2, 2, 2)), desc='3d_input'),
        ErrorSample((R(rng, 1, 1, 2, 3, 3), grid(rng, 1, 2, 2, 2, 2)), desc='5d_grid_last_dim'),
        ErrorSample((R(rng, 1, 1, 2, 3, 3), grid(rng, 1, 2, 2, 3)), desc='5d_grid_4d'),
        ErrorSample((R(rng, 2, 1, 2, 3, 3), grid(rng, 1, 2, 2, 2, 3)), desc='5d_batch_mismatch'),
        ErrorSample((R(rng, 1, 1, 2, 3, 3), grid(rng, 1, 2, 2, 2, 3).astype(np.float64)),
                    desc='5d_dtype_mismatch'),
        ErrorSample((R(rng, 1, 1, 2, 0, 3), grid(rng, 1, 2, 2, 2, 3)), desc='5d_empty'),
        ErrorSample((R(rng, 1, 1, 2, 3, 3), grid(rng, 1, 2, 2, 2, 3)),
                    dict(mode='bicubic'), desc='5d_bicubic'),
        ErrorSample((I64(rng, 1, 1, 2, 3, 3), grid(rng, 1, 2, 2, 2, 3).astype(np.int64)),
                    exc=NotImplementedError, desc='5d_int'),
    ]


def affine_grid_samples(rng):
    return [
        Sample((R(rng, 2, 2, 3), [2, 3, 4, 5]), dict(align_corners=False), desc='noac'),
        Sample((R(rng, 2, 2, 3), (2, 1, 3, 3)), dict(align_corners=True), desc='ac'),
        Sample((R(rng, 1, 2, 3), (1, 1, 1, 4)), dict(align_corners=False), desc='height1'),
        Sample((nc(R(rng, 1, 3, 2), TR), (1, 1, 2, 2)), dict(align_corners=False),
               desc='noncontig_T'),
        Sample((F64(rng, 2, 2, 3), (2, 3, 3, 2)), dict(align_corners=True), desc='f64'),
        Sample((R(rng, 2, 3, 4), [2, 3, 2, 3, 4]), dict(align_corners=False), desc='3d_noac'),
        Sample((R(rng, 1, 3, 4), (1, 1, 3, 2, 2)), dict(align_corners=True), desc='3d_ac'),
        Sample((R(rng, 1, 3, 4), (1, 2, 1, 3, 1)), dict(align_corners=False), desc='3d_size1'),
        Sample((nc(R(rng, 1, 4, 3), TR), (1, 1, 2, 2, 3)), dict(align_corners=False),
               desc='3d_noncontig_T'),
        Sample((F64(rng, 2, 3, 4), (2, 1, 2, 3, 2)), dict(align_corners=True), desc='3d_f64'),
    ]


def affine_grid_errors(rng):
    return [
        ErrorSample((R(rng, 2, 3, 3), (2, 1, 3, 3)), exc=ValueError, desc='theta_shape'),
        ErrorSample((I64(rng, 2, 2, 3), (2, 1, 3, 3)), exc=ValueError, desc='int_theta'),
        ErrorSample((R(rng, 2, 2, 3), (2, 3, 3)), exc=NotImplementedError, desc='3d_size'),
        ErrorSample((R(rng, 2, 2, 3), (2, 1, 2, 3, 3)), exc=ValueError,
                    desc='theta_2d_for_5d_size'),
        ErrorSample((R(rng, 2, 3, 4), (2, 1, 3, 3)), exc=ValueError, desc='theta_3d_for_4d_size'),
        ErrorSample((R(rng, 2, 2, 3), (2, 1, 0, 3)), exc=ValueError, desc='zero_size'),
    ]


def pixel_shuffle_samples(rng):
    return [
        Sample((R(rng, 2, 8, 3, 2), 2), desc='r2'),
        Sample((R(rng, 1, 9, 2, 1), 3), desc='r3'),
        Sample((R(rng, 12, 1, 1), 2), desc='unbatched_small'),
        Sample((R(rng, 2, 1, 4, 2, 2), 2), desc='5d'),
        Sample((nc(R(rng, 2, 4, 3, 2), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 1, 4, 2, 3), 2), desc='f64'),
        Sample((I64(rng, 1, 4, 2, 2), 2), desc='int64'),
        # (torch's backward returns a wrongly shaped gradient here: forward only)
        Sample((R(rng, 0, 4, 2, 2), 2), desc='empty_batch', requires_grad=False),
    ]


def pixel_shuffle_errors(rng):
    return [ErrorSample((R(rng, 1, 6, 2, 2), 2), desc='channels_not_divisible'),
            ErrorSample((R(rng, 4, 2), 2), desc='2d_input'),
            ErrorSample((R(rng, 1, 4, 2, 2), 0), desc='zero_factor')]


def pixel_unshuffle_samples(rng):
    return [
        Sample((R(rng, 2, 2, 4, 6), 2), desc='r2'),
        Sample((R(rng, 1, 1, 3, 3), 3), desc='r3_small'),
        Sample((R(rng, 1, 2, 6), 2), desc='unbatched_small'),
        Sample((R(rng, 2, 1, 1, 4, 2), 2), desc='5d'),
        Sample((nc(R(rng, 2, 1, 4, 6), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 2, 4), 2), desc='f64'),
        Sample((I64(rng, 1, 1, 2, 2), 2), desc='int64'),
    ]


def pixel_unshuffle_errors(rng):
    return [ErrorSample((R(rng, 1, 1, 3, 4), 2), desc='height_not_divisible'),
            ErrorSample((R(rng, 1, 1, 4, 3), 2), desc='width_not_divisible'),
            ErrorSample((R(rng, 4, 2), 2), desc='2d_input')]


# -- 3-d pooling, fractional pooling, with_indices forms ---------------------------------------

def max_pool3d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 4, 6, 4), 2), desc='k2_fast_path'),
        Sample((R(rng, 1, 1, 2, 2, 3), 2), dict(stride=1), desc='small_overlap'),
        Sample((R(rng, 1, 1, 3, 2, 2), (2, 1, 2)), dict(stride=(1, 1, 2), padding=(1, 0, 1)),
               desc='small_pad'),
        Sample((R(rng, 2, 5, 4, 5), 3), dict(stride=2, padding=1), desc='unbatched_pad'),
        Sample((R(rng, 1, 2, 5, 7, 6), (3, 2, 2)), dict(stride=(2, 1, 2), padding=1,
                                                          dilation=(2, 1, 1), ceil_mode=True),
               desc='dilation_ceil'),
        Sample((R(rng, 1, 2, 5, 4, 5), 2), dict(ceil_mode=True, return_indices=True),
               desc='ceil_indices'),
        Sample((R(rng, 1, 1, 2, 3, 2), 2), dict(stride=1, padding=1, return_indices=True),
               desc='small_indices'),
        Sample((nc(R(rng, 1, 2, 4, 6, 5), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 4, 5, 3), 2), dict(stride=1, padding=1), desc='f64'),
        Sample((I64(rng, 1, 2, 3, 4, 5), 2), dict(padding=1), desc='int64'),
    ]


def pool3d_errors(rng):
    return [
        ErrorSample((R(rng, 3, 4, 4), 2), desc='3d_input'),
        ErrorSample((R(rng, 1, 1, 4, 4, 4), 2), dict(padding=2), desc='pad_too_big'),
        ErrorSample((R(rng, 1, 1, 2, 2, 2), 3), desc='output_too_small'),
        ErrorSample((R(rng, 1, 1, 4, 4, 4), 0), desc='zero_kernel'),
        ErrorSample((R(rng, 1, 1, 4, 4, 4), 2), dict(stride=0), desc='zero_stride'),
        ErrorSample((R(rng, 1, 1, 4, 4, 4), (2, 2)), desc='kernel_2_tuple'),
        ErrorSample((B(rng, 1, 1, 4, 4, 4), 2), exc=NotImplementedError, desc='bool_input'),
    ]


def avg_pool3d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 4, 6, 4), 2), desc='k2_fast_path'),
        Sample((R(rng, 1, 1, 2, 2, 3), 2), dict(stride=1), desc='small_overlap'),
        Sample((R(rng, 1, 1, 2, 2, 3), (2, 2, 3)), dict(stride=2, padding=1), desc='small_pad'),
        Sample((R(rng, 1, 1, 2, 2, 3), (2, 1, 3)), dict(stride=2, padding=(1, 0, 1),
                                                          count_include_pad=False),
               desc='small_exclude_pad'),
        Sample((R(rng, 1, 2, 5, 7, 6), (3, 2, 3)), dict(stride=2, padding=1, ceil_mode=True,
                                                          count_include_pad=False),
               desc='ceil_exclude_pad'),
        Sample((R(rng, 2, 5, 4, 6), 3), dict(stride=(2, 1, 2), padding=1, divisor_override=5),
               desc='unbatched_divisor'),
        Sample((nc(R(rng, 1, 2, 4, 6, 5), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 3, 5, 4), 2), dict(stride=1, padding=1), desc='f64'),
        Sample((I64(rng, 1, 2, 3, 4, 5), 2), dict(padding=1), desc='int64_truncates'),
    ]


def adaptive3d_samples(rng, with_indices=False):
    kw = dict(return_indices=True) if with_indices else {}
    return [
        Sample((R(rng, 2, 3, 5, 7, 6), (3, 4, 2)), kw, desc='shrink'),
        Sample((R(rng, 1, 2, 3, 2, 4), 5), kw, desc='grow'),
        Sample((R(rng, 1, 1, 2, 2, 3), (1, 2, 2)), kw, desc='small'),
        Sample((R(rng, 3, 4, 6, 5), (2, None, 3)), kw, desc='unbatched_none'),
        Sample((nc(R(rng, 1, 2, 4, 6, 5), TR), 3), kw, desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 4, 5, 6), (2, 3, 4)), kw, desc='f64'),
    ]


def adaptive_avg3d_samples(rng):
    return adaptive3d_samples(rng) + [
        Sample((R(rng, 1, 2, 3, 2, 2), 1), desc='global_mean'),
        Sample((R(rng, 1, 2, 3, 4, 4), (0, 2, 2)), desc='empty_output', requires_grad=False),
    ]


def adaptive3d_errors(rng):
    return [
        ErrorSample((R(rng, 4, 4), 2), desc='2d_input'),
        ErrorSample((R(rng, 1, 1, 4, 4, 4), (2, 2)), desc='output_size_2'),
        ErrorSample((I64(rng, 1, 1, 4, 4, 4), 2), exc=NotImplementedError, desc='int_input'),
    ]


def adaptive_max1d_errors(rng):
    return [
        ErrorSample((R(rng, 2, 3, 4, 4), 2), desc='4d_input'),
        ErrorSample((R(rng, 2, 3, 4), (2, 2)), desc='output_size_2'),
        ErrorSample((I64(rng, 2, 3, 4), 2), exc=NotImplementedError, desc='int_input'),
    ]


def _pool_indices_nd(rng, lead, sizes, k):
    """Indices a ``k``-wide max pool (stride k) over spatial ``sizes`` could return."""
    out = tuple(sz // k for sz in sizes)
    flat = 0
    for i, (o, sz) in enumerate(zip(out, sizes)):
        shape = [1] * len(out)
        shape[i] = o
        pos = np.arange(o).reshape(shape) * k + rng.integers(0, k, tuple(lead) + out)
        flat = flat * sz + pos
    return flat.astype(np.int64)


def max_unpool3d_samples(rng):
    return [
        Sample((R(rng, 2, 2, 2, 3, 2), _pool_indices_nd(rng, (2, 2), (4, 6, 4), 2), 2),
               desc='k2'),
        Sample((R(rng, 1, 1, 1, 2, 2), _pool_indices_nd(rng, (1, 1), (2, 4, 4), 2), 2),
               desc='small'),
        Sample((R(rng, 2, 2, 2, 2), _pool_indices_nd(rng, (2,), (5, 4, 5), 2), 2),
               dict(output_size=(5, 4, 5)), desc='unbatched_output_size'),
        Sample((F64(rng, 1, 2, 2, 1, 2), _pool_indices_nd(rng, (1, 2), (6, 3, 6), 3), 3),
               desc='f64'),
    ]


def max_unpool3d_errors(rng):
    return [
        ErrorSample((R(rng, 1, 1, 2, 2, 2), np.full((1, 1, 2, 2, 2), 99, np.int64), 2),
                    desc='index_out_of_range'),
        ErrorSample((R(rng, 1, 1, 2, 2, 2), np.zeros((1, 1, 2, 2, 1), np.int64), 2),
                    desc='indices_shape'),
        ErrorSample((R(rng, 1, 1, 2, 2, 2), np.zeros((1, 1, 2, 2, 2), np.int64), 2),
                    dict(output_size=(9, 9, 9)), exc=ValueError, desc='bad_output_size'),
        ErrorSample((R(rng, 1, 1, 2, 2, 2), np.zeros((1, 1, 2, 2, 2), np.int64), 2),
                    dict(output_size=(4, 4)), exc=ValueError, desc='output_size_length'),
        ErrorSample((R(rng, 1, 2, 2), np.zeros((1, 2, 2), np.int64), 2), desc='3d_input'),
        ErrorSample((R(rng, 1, 1, 2, 2, 2), np.zeros((1, 1, 2, 2, 2), np.float32), 2),
                    desc='float_indices'),
    ]


def max_unpool1d_samples(rng):
    return [
        Sample((R(rng, 2, 3, 4), _pool_indices_nd(rng, (2, 3), (8,), 2), 2), desc='k2'),
        Sample((R(rng, 1, 2, 3), _pool_indices_nd(rng, (1, 2), (6,), 2), 2), desc='small'),
        Sample((R(rng, 2, 2), _pool_indices_nd(rng, (2,), (5,), 2), 2),
               dict(output_size=[5]), desc='unbatched_output_size'),
        Sample((F64(rng, 1, 2, 2), _pool_indices_nd(rng, (1, 2), (6,), 3), 3), desc='f64'),
    ]


def max_unpool1d_errors(rng):
    return [
        ErrorSample((R(rng, 1, 1, 2), np.full((1, 1, 2), 99, np.int64), 2),
                    desc='index_out_of_range'),
        ErrorSample((R(rng, 1, 1, 2), np.zeros((1, 1, 3), np.int64), 2), desc='indices_shape'),
        ErrorSample((R(rng, 1, 1, 2), np.zeros((1, 1, 2), np.int64), 2),
                    dict(output_size=(20,)), exc=ValueError, desc='bad_output_size'),
        ErrorSample((R(rng, 4), np.zeros((4,), np.int64), 2), desc='1d_input'),
    ]


def lp_pool3d_samples(rng):
    return [
        Sample((R(rng, 1, 2, 4, 6, 4), 2, 2), desc='p2_k2'),
        Sample((POS(rng, 1, 1, 2, 2, 3), 3, 2), dict(stride=1), desc='small_p3'),
        Sample((POS(rng, 1, 2, 5, 6, 5), 1.5, (3, 2, 2)), dict(stride=2, ceil_mode=True),
               desc='p1.5_ceil'),
        Sample((POS(rng, 2, 4, 4, 2).astype(np.float64), 2, 2), desc='unbatched_f64'),
    ]


def _samples_for(rng, lead, n, dtype=np.float32):
    return rng.random(tuple(lead) + (n,)).astype(dtype)


def fractional2d_samples(rng, with_indices=False):
    kw = dict(return_indices=True) if with_indices else {}
    return [
        Sample((R(rng, 2, 3, 8, 9), 2), dict(output_size=(4, 5),
                                             _random_samples=_samples_for(rng, (2, 3), 2), **kw),
               desc='k2'),
        Sample((F64(rng, 1, 1, 3, 4), 2), dict(
            output_size=2, _random_samples=_samples_for(rng, (1, 1), 2, np.float64), **kw),
               desc='small'),
        Sample((R(rng, 2, 9, 8), (3, 2)), dict(output_ratio=(0.5, 0.6),
                                               _random_samples=_samples_for(rng, (1, 2), 2),
                                               **kw), desc='unbatched_ratio'),
        Sample((R(rng, 1, 2, 7, 7), 3), dict(output_size=(5, 1),
                                             _random_samples=_samples_for(rng, (3, 2), 2), **kw),
               desc='extra_samples'),
        Sample((nc(R(rng, 1, 2, 7, 6), TR), 2), dict(
            output_size=3, _random_samples=_samples_for(rng, (1, 2), 2), **kw),
               desc='noncontig_T'),
        Sample((F64(rng, 1, 2, 6, 5), 2), dict(
            output_size=(3, 4), _random_samples=_samples_for(rng, (1, 2), 2, np.float64), **kw),
               desc='f64'),
    ]


def fractional2d_errors(rng):
    s = lambda *shape: rng.random(shape).astype(np.float32)  # noqa: E731
    return [
        ErrorSample((R(rng, 1, 2, 8, 8), 2), exc=ValueError, desc='no_size'),
        ErrorSample((R(rng, 1, 2, 8, 8), 2), dict(output_size=8), desc='pool_too_large'),
        ErrorSample((R(rng, 1, 2, 8, 8), 2), dict(output_size=4, _random_samples=s(1, 2, 3)),
                    desc='samples_last_dim'),
        ErrorSample((R(rng, 2, 2, 8, 8), 2), dict(output_size=4, _random_samples=s(1, 2, 2)),
                    desc='samples_batch'),
        ErrorSample((R(rng, 1, 2, 8, 8), 2), dict(
            output_size=4, _random_samples=s(1, 2, 2).astype(np.float64)), desc='samples_dtype'),
        ErrorSample((R(rng, 1, 2, 8, 8), (2, 2, 2)), dict(output_size=4), desc='kernel_3'),
        ErrorSample((R(rng, 1, 2, 8, 8), 2), dict(output_size=(4, 4, 4)), desc='output_3'),
    ]


def fractional3d_samples(rng, with_indices=False):
    kw = dict(return_indices=True) if with_indices else {}
    return [
        Sample((R(rng, 2, 2, 6, 8, 7), 2), dict(output_size=(3, 4, 5),
                                                _random_samples=_samples_for(rng, (2, 2), 3),
                                                **kw), desc='k2'),
        Sample((F64(rng, 1, 1, 2, 2, 3), 1), dict(
            output_size=(1, 1, 2), _random_samples=_samples_for(rng, (1, 1), 3, np.float64),
            **kw), desc='small'),
        Sample((R(rng, 2, 6, 7, 8), (2, 3, 2)), dict(
            output_ratio=(0.5, 0.5, 0.6), _random_samples=_samples_for(rng, (1, 2), 3), **kw),
               desc='unbatched_ratio'),
        Sample((F64(rng, 1, 2, 5, 4, 6), 2), dict(
            output_size=(3, 2, 4), _random_samples=_samples_for(rng, (1, 2), 3, np.float64),
            **kw), desc='f64'),
    ]


def fractional3d_errors(rng):
    s = lambda *shape: rng.random(shape).astype(np.float32)  # noqa: E731
    return [
        ErrorSample((R(rng, 1, 1, 8, 8, 8), 2), exc=ValueError, desc='no_size'),
        ErrorSample((R(rng, 1, 1, 8, 8, 8), 5), dict(output_size=4), desc='pool_too_large'),
        ErrorSample((R(rng, 1, 1, 8, 8, 8), 2), dict(output_size=4, _random_samples=s(1, 1, 2)),
                    desc='samples_last_dim'),
    ]


def channel_shuffle_samples(rng):
    return [
        Sample((R(rng, 2, 6, 3, 2), 3), desc='g3'),
        Sample((R(rng, 1, 4, 3), 2), desc='3d_small'),
        Sample((R(rng, 2, 4, 2, 2, 2), 4), desc='5d'),
        Sample((R(rng, 1, 6, 2), 1), desc='one_group'),
        Sample((nc(R(rng, 2, 6, 3, 4), TR), 2), desc='noncontig_T'),
        Sample((F64(rng, 1, 6, 2), 3), desc='f64'),
        Sample((I64(rng, 1, 4, 2), 2), desc='int64'),
        Sample((R(rng, 0, 3, 2), 3), desc='empty_batch', requires_grad=False),
    ]


def channel_shuffle_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 4), 2), desc='channels_not_divisible'),
            ErrorSample((R(rng, 2, 4, 4), 0), desc='zero_groups'),
            ErrorSample((R(rng, 3, 4), 2), desc='2d_input')]


OPS = [
    OpInfo('nn.functional.max_pool2d', F('max_pool2d'), max_pool2d_samples,
           errors=pool2d_errors),
    OpInfo('nn.functional.max_pool1d', F('max_pool1d'), max_pool1d_samples,
           errors=pool1d_errors),
    OpInfo('nn.functional.avg_pool2d', F('avg_pool2d'), avg_pool2d_samples,
           errors=lambda rng: pool2d_errors(rng, IndexError)),
    OpInfo('nn.functional.avg_pool1d', F('avg_pool1d'), avg_pool1d_samples,
           errors=pool1d_errors),
    OpInfo('nn.functional.adaptive_avg_pool2d', F('adaptive_avg_pool2d'),
           adaptive_avg2d_samples, errors=adaptive_errors),
    OpInfo('nn.functional.adaptive_avg_pool1d', F('adaptive_avg_pool1d'),
           adaptive_avg1d_samples),
    OpInfo('nn.functional.adaptive_max_pool2d', F('adaptive_max_pool2d'),
           adaptive_max2d_samples, errors=adaptive_errors),
    OpInfo('nn.functional.adaptive_max_pool1d', F('adaptive_max_pool1d'),
           adaptive_max1d_samples),
    OpInfo('nn.functional.max_unpool2d', F('max_unpool2d'), max_unpool2d_samples,
           errors=max_unpool2d_errors),
    OpInfo('nn.functional.lp_pool2d', F('lp_pool2d'), lp_pool2d_samples),
    OpInfo('nn.functional.lp_pool1d', F('lp_pool1d'), lp_pool1d_samples),
    OpInfo('nn.functional.max_pool3d', F('max_pool3d'), max_pool3d_samples,
           errors=pool3d_errors),
    OpInfo('nn.functional.avg_pool3d', F('avg_pool3d'), avg_pool3d_samples,
           errors=pool3d_errors),
    OpInfo('nn.functional.adaptive_avg_pool3d', F('adaptive_avg_pool3d'),
           adaptive_avg3d_samples, errors=adaptive3d_errors),
    OpInfo('nn.functional.adaptive_max_pool3d', F('adaptive_max_pool3d'),
           lambda rng: adaptive3d_samples(rng) + adaptive3d_samples(rng, True)[:2],
           errors=adaptive3d_errors),
    OpInfo('nn.functional.max_unpool3d', F('max_unpool3d'), max_unpool3d_samples,
           errors=max_unpool3d_errors),
    OpInfo('nn.functional.max_unpool1d', F('max_unpool1d'), max_unpool1d_samples,
           errors=max_unpool1d_errors),
    OpInfo('nn.functional.lp_pool3d', F('lp_pool3d'), lp_pool3d_samples),
    OpInfo('nn.functional.fractional_max_pool2d', F('fractional_max_pool2d'),
           lambda rng: fractional2d_samples(rng) + fractional2d_samples(rng, True)[:2],
           errors=fractional2d_errors),
    OpInfo('nn.functional.fractional_max_pool3d', F('fractional_max_pool3d'),
           lambda rng: fractional3d_samples(rng) + fractional3d_samples(rng, True)[:2],
           errors=fractional3d_errors),
    OpInfo('nn.functional.fractional_max_pool2d_with_indices',
           F('fractional_max_pool2d_with_indices'), lambda rng: fractional2d_samples(rng)[:3]),
    OpInfo('nn.functional.fractional_max_pool3d_with_indices',
           F('fractional_max_pool3d_with_indices'), lambda rng: fractional3d_samples(rng)[:2]),
    OpInfo('nn.functional.max_pool1d_with_indices', F('max_pool1d_with_indices'),
           lambda rng: max_pool1d_samples(rng)[:3]),
    OpInfo('nn.functional.max_pool2d_with_indices', F('max_pool2d_with_indices'),
           lambda rng: max_pool2d_samples(rng)[2:5]),
    OpInfo('nn.functional.max_pool3d_with_indices', F('max_pool3d_with_indices'),
           lambda rng: max_pool3d_samples(rng)[1:4]),
    OpInfo('nn.functional.adaptive_max_pool1d_with_indices',
           F('adaptive_max_pool1d_with_indices'), adaptive_max1d_samples,
           errors=adaptive_max1d_errors),
    OpInfo('nn.functional.adaptive_max_pool2d_with_indices',
           F('adaptive_max_pool2d_with_indices'), lambda rng: adaptive_max2d_samples(rng)[:3]),
    OpInfo('nn.functional.adaptive_max_pool3d_with_indices',
           F('adaptive_max_pool3d_with_indices'), lambda rng: adaptive3d_samples(rng)[:3]),
] + [
    OpInfo(f'nn.functional.pad_{mode}', F('pad'), pad_samples(mode), errors=pad_errors(mode))
    for mode in ('constant', 'reflect', 'replicate', 'circular')
] + [
    OpInfo(f'nn.functional.interpolate_{mode.replace("-", "_")}', F('interpolate'),
           interp_samples(mode), errors=interp_errors(mode))
    for mode in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area')
] + [
    OpInfo('nn.functional.interpolate_lanczos', F('interpolate'), lanczos_samples,
           errors=lanczos_errors),
] + [
    OpInfo('nn.functional.grid_sample', F('grid_sample'), grid_sample_samples,
           errors=grid_sample_errors),
    OpInfo('nn.functional.affine_grid', F('affine_grid'), affine_grid_samples,
           errors=affine_grid_errors),
    OpInfo('nn.functional.pixel_shuffle', F('pixel_shuffle'), pixel_shuffle_samples,
           errors=pixel_shuffle_errors),
    OpInfo('nn.functional.pixel_unshuffle', F('pixel_unshuffle'), pixel_unshuffle_samples,
           errors=pixel_unshuffle_errors),
    OpInfo('nn.functional.channel_shuffle', F('channel_shuffle'), channel_shuffle_samples,
           errors=channel_shuffle_errors),
    # (torch has no derivative for native_channel_shuffle: forward and errors only)
    OpInfo('nn.functional.native_channel_shuffle', F('native_channel_shuffle'),
           channel_shuffle_samples, errors=channel_shuffle_errors, differentiable=False),
]
