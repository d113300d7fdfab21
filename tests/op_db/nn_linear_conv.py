"""Rows for dynagrad.nn.functional: linear_conv (linear, bilinear, convolutions, unfold, fold).

gradcheck/gradgradcheck run only on samples of at most 12/8 elements in all, so each row
has a few tiny samples for them; tests/nn/test_functional_conv.py gradchecks larger ones.
"""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def F(name):
    return lambda lib, *a, **k: getattr(lib.nn.functional, name)(*a, **k)


D = F64


def SMALL(rng, *shape):
    """Values in [-0.5, 0.5): a convolution sums up to ~30 products, and float32 rounding of
    such a sum (in torch as here) must stay inside the harness's forward tolerance."""
    return np.asarray(rng.uniform(-0.5, 0.5, shape), dtype=np.float32)


# -- linear, bilinear ------------------------------------------------------------------------

def linear_samples(rng):
    r = lambda *s: R(rng, *s)  # noqa: E731
    return [
        Sample((r(3, 4), r(5, 4), r(5)), desc='2d_bias'),
        Sample((r(3, 4), r(5, 4)), desc='2d_no_bias'),
        Sample((r(3, 4), r(5, 4), None), desc='bias_none'),
        Sample((r(4), r(5, 4), r(5)), desc='1d_input_bias'),
        Sample((r(4), r(5, 4)), desc='1d_input'),
        Sample((r(2, 3, 4), r(5, 4), r(5)), desc='3d_bias'),
        Sample((r(2, 3, 4), r(5, 4)), desc='3d_no_bias'),
        Sample((r(2, 1, 3, 4), r(2, 4), r(2)), desc='4d_bias'),
        Sample((r(4), r(4)), desc='1d_weight_1d_input'),
        Sample((r(4), r(4), r()), desc='1d_weight_0dim_bias'),
        Sample((r(3, 4), r(4)), desc='1d_weight_2d_input'),
        Sample((r(2, 3, 4), r(4)), desc='1d_weight_3d_input'),
        Sample((r(3, 4), r(5, 4), r(1)), desc='bias_broadcast_1'),
        Sample((r(3, 4), r(5, 4), r()), desc='bias_0dim'),
        Sample((r(3, 4), r(5, 4), r(3, 5)), desc='bias_full'),
        Sample((r(0, 4), r(5, 4), r(5)), desc='empty_batch'),
        Sample((nc(r(4, 3), TR), nc(r(4, 5), TR), r(5)), desc='noncontig'),
        Sample((D(rng, 3, 4), D(rng, 2, 4), D(rng, 2)), desc='f64'),
        Sample((I64(rng, 3, 4), I64(rng, 2, 4)), desc='int64'),
        Sample((r(2, 2), r(2, 2), r(2)), desc='tiny'),
        Sample((r(1, 3), r(1, 3), r(1)), desc='tiny_gg'),
        Sample((r(1, 4), r(5, 4), r(5)), desc='one_row'),    # the weight gradient an outer product
        Sample((D(rng, 1, 1, 4), D(rng, 3, 4)), desc='f64_one_row_3d'),
    ]


def linear_errors(rng):
    r = lambda *s: R(rng, *s)  # noqa: E731
    return [
        ErrorSample((r(3, 4), r(5, 3)), desc='in_features_mismatch'),
        ErrorSample((r(3, 4), r(5, 4), r(3)), desc='bias_wrong_size'),
        ErrorSample((r(), r(5, 4)), desc='0dim_input'),
        ErrorSample((r(3, 4), r(2, 5, 4)), desc='3d_weight'),
        ErrorSample((I64(rng, 3, 4), r(5, 4)), desc='int_input_float_weight'),
        ErrorSample((r(3, 4), D(rng, 5, 4)), desc='dtype_mismatch'),
        ErrorSample((r(3, 4), r(5, 4), D(rng, 5)), desc='bias_dtype_mismatch'),
        ErrorSample((r(3, 4), r(4), r()), desc='1d_weight_bias_batched'),
    ]


def bilinear_samples(rng):
    r = lambda *s: R(rng, *s)  # noqa: E731
    return [
        Sample((r(3, 2), r(3, 4), r(5, 2, 4), r(5)), desc='2d_bias'),
        Sample((r(3, 2), r(3, 4), r(5, 2, 4)), desc='2d_no_bias'),
        Sample((r(2, 3, 2), r(2, 3, 4), r(5, 2, 4), r(5)), desc='3d'),
        Sample((r(2), r(3), r(4, 2, 3), r(4)), desc='1d'),
        Sample((r(0, 2), r(0, 3), r(4, 2, 3), r(4)), desc='empty_batch'),
        Sample((nc(r(2, 3), TR), r(3, 4), r(5, 2, 4)), desc='noncontig'),
        Sample((D(rng, 3, 2), D(rng, 3, 4), D(rng, 5, 2, 4), D(rng, 5)), desc='f64'),
        Sample((r(1, 2), r(1, 2), r(1, 2, 2), r(1)), desc='tiny'),
        Sample((r(1, 2), r(1, 1), r(2, 2, 1)), desc='tiny_gg'),
    ]


def bilinear_errors(rng):
    r = lambda *s: R(rng, *s)  # noqa: E731
    return [
        ErrorSample((r(3, 2), r(4, 4), r(5, 2, 4)), desc='batch_mismatch'),
        ErrorSample((r(3, 3), r(3, 4), r(5, 2, 4)), desc='in1_mismatch'),
        ErrorSample((r(3, 2), r(3, 3), r(5, 2, 4)), desc='in2_mismatch'),
        ErrorSample((r(3, 2), r(3, 4), r(5, 2, 4), r(4)), desc='bias_mismatch'),
    ]


# -- convolutions ------------------------------------------------------------------------------

def conv1d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 7), r(4, 3, 3), r(4)), desc='basic'),
        Sample((r(2, 3, 7), r(4, 3, 3)), desc='no_bias'),
        Sample((r(2, 3, 8), r(4, 3, 2), r(4)), dict(stride=2, padding=1), desc='stride_pad'),
        Sample((r(2, 3, 9), r(4, 3, 3)), dict(dilation=2, padding=(2,)), desc='dilation'),
        Sample((r(2, 4, 7), r(6, 2, 3), r(6)), dict(groups=2), desc='groups'),
        Sample((r(2, 3, 7), r(3, 1, 3)), dict(groups=3, padding='same'), desc='depthwise_same'),
        Sample((r(2, 3, 7), r(4, 3, 4)), dict(padding='same'), desc='same_even_kernel'),
        Sample((r(2, 3, 7), r(4, 3, 2)), dict(padding='same', dilation=3), desc='same_dilated'),
        Sample((r(2, 3, 7), r(4, 3, 3)), dict(padding='valid'), desc='valid'),
        Sample((r(3, 7), r(4, 3, 3), r(4)), desc='unbatched'),
        Sample((r(0, 3, 7), r(4, 3, 3), r(4)), desc='empty_batch'),
        Sample((nc(r(2, 7, 3), TR), r(4, 3, 3)), desc='noncontig_input'),
        Sample((r(2, 3, 7), nc(r(4, 3, 6), STEP)), desc='noncontig_weight'),
        Sample((D(rng, 2, 3, 7), D(rng, 4, 3, 3), D(rng, 4)), dict(stride=2), desc='f64'),
        Sample((r(1, 1, 5), r(2, 1, 2), r(2)), dict(stride=2, padding=1), desc='tiny'),
        Sample((r(1, 2, 2), r(1, 2, 2)), dict(padding=1), desc='tiny_gg'),
    ]


def conv2d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 5, 6), r(4, 3, 3, 3), r(4)), desc='basic'),
        Sample((r(2, 3, 5, 6), r(4, 3, 3, 2)), desc='no_bias'),
        Sample((r(2, 3, 7, 6), r(4, 3, 3, 3), r(4)), dict(stride=(2, 1), padding=(1, 2)),
               desc='stride_pad_tuples'),
        Sample((r(2, 3, 7, 7), r(2, 3, 2, 3)), dict(stride=3, padding=1, dilation=(2, 1)),
               desc='stride_dilation'),
        Sample((r(2, 4, 5, 5), r(6, 2, 3, 3), r(6)), dict(groups=2, padding=1), desc='groups'),
        Sample((r(1, 3, 5, 5), r(6, 1, 3, 3)), dict(groups=3), desc='depthwise_multiplier'),
        Sample((r(2, 3, 5, 6), r(4, 3, 3, 3)), dict(padding='same'), desc='same'),
        Sample((r(2, 3, 5, 6), r(4, 3, 2, 4), r(4)), dict(padding='same', dilation=(3, 1)),
               desc='same_even_kernel'),
        Sample((r(2, 3, 5, 6), r(4, 3, 3, 3)), dict(padding='valid'), desc='valid'),
        Sample((r(2, 3, 5, 6), r(4, 3, 1, 1), r(4)), desc='1x1'),
        Sample((r(3, 5, 6), r(4, 3, 3, 3), r(4)), desc='unbatched'),
        Sample((r(0, 3, 5, 6), r(4, 3, 3, 3), r(4)), desc='empty_batch'),
        Sample((nc(r(2, 3, 6, 5), TR), r(4, 3, 3, 3), r(4)), desc='noncontig_input'),
        Sample((r(2, 3, 5, 6), nc(r(4, 3, 3, 6), STEP)), desc='noncontig_weight'),
        Sample((D(rng, 2, 3, 5, 6), D(rng, 4, 3, 3, 3), D(rng, 4)), dict(padding=1),
               desc='f64'),
        Sample((I64(rng, 2, 3, 5, 6), I64(rng, 4, 3, 3, 3), I64(rng, 4)), dict(stride=2),
               desc='int64'),
        Sample((I32(rng, 1, 2, 4, 4), I32(rng, 2, 1, 2, 2)), dict(groups=2), desc='int32'),
        Sample((r(1, 1, 3, 3), r(1, 1, 2, 2), r(1)), dict(stride=2, padding=1), desc='tiny'),
        Sample((r(1, 1, 2, 3), r(1, 1, 1, 2)), dict(padding=(1, 0)), desc='tiny_gg'),
    ]


def conv3d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 2, 4, 5, 4), r(3, 2, 2, 3, 2), r(3)), desc='basic'),
        Sample((r(1, 4, 5, 4, 5), r(4, 2, 3, 2, 3)), dict(stride=(2, 1, 2), padding=1,
                                                          groups=2), desc='stride_groups'),
        Sample((r(1, 2, 5, 5, 5), r(2, 2, 2, 2, 2), r(2)), dict(dilation=2, padding='same'),
               desc='same_dilated'),
        Sample((r(2, 4, 4, 3), r(3, 2, 2, 2, 2)), desc='unbatched'),
        Sample((nc(r(1, 2, 4, 3, 4), TR), r(3, 2, 2, 2, 2)), desc='noncontig_input'),
        Sample((D(rng, 1, 2, 3, 4, 3), D(rng, 2, 2, 2, 2, 2), D(rng, 2)), desc='f64'),
        Sample((r(1, 1, 2, 2, 2), r(1, 1, 1, 2, 1), r(1)), dict(padding=(1, 0, 0)),
               desc='tiny'),
        Sample((r(1, 1, 2, 2, 1), r(1, 1, 2, 1, 1)), desc='tiny_gg'),
    ]


def conv_errors(d):
    def gen(rng):
        r = lambda *s: SMALL(rng, *s)  # noqa: E731
        S = (5,) * d
        K = (3,) * d
        return [
            ErrorSample((r(2, 3), r(4, 3, *K)) if d == 1 else (r(2, 3, *S[:-2]),
                                                                r(4, 3, *K)),
                        desc='input_too_few_dims'),
            ErrorSample((r(1, 2, 3, *S), r(4, 3, *K)), desc='input_too_many_dims'),
            ErrorSample((r(2, 4, *S), r(4, 3, *K)), desc='channel_mismatch'),
            ErrorSample((r(2, 4, *S), r(3, 2, *K)), dict(groups=2), desc='groups_not_dividing'),
            ErrorSample((r(2, 3, *(2,) * d), r(4, 3, *K)), desc='kernel_too_large'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(padding='full'),
                        desc='bad_padding_string'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(padding='same', stride=2),
                        desc='same_strided'),
            ErrorSample((B(rng, 2, 3, *S), B(rng, 4, 3, *K)), desc='bool_input'),
            ErrorSample((I64(rng, 2, 3, *S), r(4, 3, *K)), desc='int_input_float_weight'),
            ErrorSample((r(2, 3, *S), D(rng, 4, 3, *K)), desc='dtype_mismatch'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K), r(5)), desc='bias_wrong_size'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(padding=-1), desc='negative_padding'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(stride=0), desc='zero_stride'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(stride=(1,) * (d + 1)),
                        desc='stride_tuple_length'),
            ErrorSample((r(2, 3, *S), r(4, 3, *K)), dict(dilation=0), desc='zero_dilation'),
        ]
    return gen


def conv_transpose1d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 5), r(3, 4, 3), r(4)), desc='basic'),
        Sample((r(2, 3, 5), r(3, 2, 3)), dict(stride=2, padding=1, output_padding=1),
               desc='stride_output_padding'),
        Sample((r(2, 4, 5), r(4, 2, 2), r(4)), dict(groups=2, dilation=2, stride=3),
               desc='groups_dilation'),
        Sample((r(2, 3, 5), r(3, 2, 3)), dict(dilation=2, output_padding=1),
               desc='output_padding_from_dilation'),
        Sample((r(3, 5), r(3, 4, 3), r(4)), desc='unbatched'),
        Sample((r(0, 3, 5), r(3, 4, 3), r(4)), desc='empty_batch'),
        Sample((nc(r(2, 5, 3), TR), r(3, 4, 3)), desc='noncontig_input'),
        Sample((D(rng, 2, 3, 5), D(rng, 3, 4, 3), D(rng, 4)), dict(stride=2), desc='f64'),
        Sample((I64(rng, 2, 3, 5), I64(rng, 3, 4, 3)), dict(stride=2, padding=1), desc='int64'),
        Sample((r(1, 1, 3), r(1, 2, 2), r(2)), dict(stride=2, padding=1), desc='tiny'),
        Sample((r(1, 1, 3), r(1, 1, 2)), dict(stride=2, output_padding=1), desc='tiny_gg'),
    ]


def conv_transpose2d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 4, 5), r(3, 4, 3, 3), r(4)), desc='basic'),
        Sample((r(2, 3, 4, 3), r(3, 2, 3, 2)), dict(stride=(2, 3), padding=(1, 0),
                                                     output_padding=(1, 2)), desc='stride_tuples'),
        Sample((r(2, 4, 3, 3), r(4, 3, 2, 3), r(6)), dict(groups=2, dilation=(2, 1), padding=1),
               desc='groups_dilation'),
        Sample((r(3, 4, 5), r(3, 4, 3, 3), r(4)), dict(stride=2), desc='unbatched'),
        Sample((nc(r(2, 3, 5, 4), TR), r(3, 4, 3, 3)), desc='noncontig_input'),
        Sample((r(2, 3, 4, 5), nc(r(3, 4, 3, 6), STEP)), desc='noncontig_weight'),
        Sample((D(rng, 2, 3, 4, 5), D(rng, 3, 2, 3, 3), D(rng, 2)), dict(stride=2, padding=1),
               desc='f64'),
        Sample((r(1, 1, 2, 2), r(1, 1, 2, 2), r(1)), dict(stride=2, padding=1), desc='tiny'),
        Sample((r(1, 1, 2, 2), r(1, 1, 1, 2)), dict(stride=(2, 1)), desc='tiny_gg'),
    ]


def conv_transpose3d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(1, 2, 3, 2, 3), r(2, 3, 2, 2, 2), r(3)), desc='basic'),
        Sample((r(1, 2, 2, 3, 2), r(2, 1, 2, 3, 2)), dict(stride=2, padding=(0, 1, 0),
                                                          output_padding=1, groups=2),
               desc='stride_groups'),
        Sample((D(rng, 1, 2, 2, 2, 2), D(rng, 2, 2, 2, 2, 2), D(rng, 2)), desc='f64'),
        Sample((r(1, 1, 1, 2, 2), r(1, 1, 2, 1, 1), r(1)), desc='tiny'),
    ]


def conv_transpose_errors(d):
    def gen(rng):
        r = lambda *s: SMALL(rng, *s)  # noqa: E731
        S = (4,) * d
        K = (3,) * d
        return [
            ErrorSample((r(2, 4, *S), r(3, 2, *K)), desc='channel_mismatch'),
            ErrorSample((r(1, 2, 3, *S), r(3, 2, *K)), desc='input_too_many_dims'),
            ErrorSample((r(2, 3, *S), r(3, 2, *K)), dict(output_padding=1),
                        desc='output_padding_too_large'),
            ErrorSample((r(2, 3, *S), r(3, 2, *K)), dict(groups=2), desc='groups_not_dividing'),
            ErrorSample((r(2, 3, *S), r(3, 2, *K), r(3)), desc='bias_wrong_size'),
            ErrorSample((r(2, 3, *S), D(rng, 3, 2, *K)), desc='dtype_mismatch'),
            ErrorSample((r(2, 3, *S), r(3, 2, *K)), dict(stride=0), desc='zero_stride'),
            ErrorSample((r(2, 3, *(1,) * d), r(3, 2, *K)), dict(padding=2),
                        desc='output_too_small'),
        ]
    return gen


# -- unfold, fold --------------------------------------------------------------------------

def unfold_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 4, 5), 2), desc='basic'),
        Sample((r(2, 3, 5, 5), (2, 3)), dict(stride=(2, 1), padding=1, dilation=(1, 2)),
               desc='all_args'),
        Sample((r(3, 4, 5), 3), dict(padding=1), desc='unbatched'),
        Sample((r(2, 3, 4, 5), 1), desc='1x1'),
        Sample((nc(r(2, 3, 5, 4), TR), 2), dict(stride=2), desc='noncontig'),
        Sample((r(0, 3, 4, 5), 2), desc='empty_batch'),
        Sample((D(rng, 1, 2, 4, 4), 3), dict(stride=1, padding=2, dilation=2), desc='f64'),
        Sample((r(1, 1, 3, 3), 2), dict(stride=2, padding=1), desc='tiny'),
        Sample((r(1, 1, 2, 3), (1, 2)), desc='tiny_gg'),
    ]


def unfold_errors(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        ErrorSample((r(2, 3, 4), 5), desc='kernel_too_large'),
        ErrorSample((r(4, 5), 2), exc=IndexError, desc='2d_input'),
        ErrorSample((r(1, 2, 3, 4, 5), 2), desc='5d_input'),
        ErrorSample((I64(rng, 2, 3, 4, 5), 2), desc='int_input'),
        ErrorSample((r(2, 3, 4, 5), 2), dict(stride=0), desc='zero_stride'),
        ErrorSample((r(2, 3, 4, 5), 0), desc='zero_kernel'),
        ErrorSample((r(2, 3, 4, 5), (1, 2, 3)), desc='kernel_tuple_length'),
    ]


def fold_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 12, 12), (4, 5), 2), desc='basic'),
        Sample((r(2, 18, 9), (5, 5), (2, 3)), dict(stride=(2, 1), padding=1, dilation=(1, 2)),
               desc='all_args'),
        Sample((r(36, 20), (4, 5), 3), dict(padding=1), desc='unbatched'),
        Sample((r(1, 4, 4), 4, 2), dict(stride=2), desc='no_overlap'),
        Sample((nc(r(2, 4, 4), TR), (3, 3), 2), desc='noncontig'),
        Sample((r(0, 12, 12), (4, 5), 2), desc='empty_batch'),
        Sample((D(rng, 1, 18, 4), (4, 4), 3), dict(padding=2, dilation=2, stride=3), desc='f64'),
        Sample((r(1, 4, 2), (2, 3), 2), desc='tiny'),
        Sample((r(1, 2, 4), (2, 3), (1, 2)), desc='tiny_gg'),
    ]


def fold_errors(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        ErrorSample((r(2, 10, 12), (4, 5), 2), desc='channels_not_divisible'),
        ErrorSample((r(2, 12, 11), (4, 5), 2), desc='wrong_block_count'),
        ErrorSample((r(2, 12, 12, 1), (4, 5), 2), desc='4d_input'),
        ErrorSample((r(12), (4, 5), 2), desc='1d_input'),
        ErrorSample((I64(rng, 2, 12, 12), (4, 5), 2), desc='int_input'),
        ErrorSample((r(2, 12, 12), (4, 5), 2), dict(stride=0), desc='zero_stride'),
    ]


# -- embedding_bag(scale_grad_by_freq=True) ---------------------------------------------------
# (The plain embedding_bag row lives in nn_activation_norm.py.) Each sample repeats all its
# indices equally often: PyTorch 2.13's CPU kernel divides a row's gradient by the count of
# another row when counts differ (pytorch/pytorch#190063), and dynagrad divides by the
# documented frequency; tests/nn/test_embedding_bag_freq.py checks mixed counts against
# torch's embedding.

def _bag_offsets(*v):
    return np.array(v, np.int64)


def embedding_bag_freq_samples(rng):
    freq = dict(scale_grad_by_freq=True)
    samples = [
        Sample((np.array([1, 2, 1, 0, 2, 0]), R(rng, 3, 2), _bag_offsets(0, 2, 5)),
               dict(freq, mode='sum'), desc='sum_twice_each'),
        Sample((np.array([1, 2, 1, 0, 2, 0]), R(rng, 3, 2), _bag_offsets(0, 2, 5)),
               dict(freq), desc='mean_twice_each'),
        Sample((np.array([[2, 0], [0, 2]]), R(rng, 3, 2)), dict(freq, mode='sum'),
               desc='2d_sum'),
        Sample((np.array([[2, 0, 1], [1, 0, 2]]), R(rng, 3, 2)), dict(freq),
               desc='2d_mean'),
        Sample((np.array([0, 1, 2]), R(rng, 3, 2), _bag_offsets(0, 1, 1)),
               dict(freq, mode='mean'), desc='once_each_empty_bag'),
        Sample((np.array([1, 2, 1, 0, 2, 0]), R(rng, 3, 2), _bag_offsets(0, 3)),
               dict(freq, padding_idx=1), desc='padding_mean'),
        Sample((np.array([1, 2, 1, 0, 2, 0]), R(rng, 3, 2), _bag_offsets(0, 3)),
               dict(freq, mode='sum', padding_idx=1), desc='padding_sum'),
        Sample((np.array([1, 0, 0, 1]), R(rng, 2, 2), _bag_offsets(0, 1)),
               dict(freq, mode='sum', per_sample_weights=R(rng, 4)),
               desc='per_sample_weights'),
        Sample((np.array([1, 0, 1, 0]), D(rng, 2, 2), _bag_offsets(0, 2, 4)),
               dict(freq, include_last_offset=True), desc='f64_include_last_offset'),
    ]
    # the gradient is scaled on purpose: finite differences apply only where every index
    # occurs once
    for s in samples:
        s.gradcheck = s.desc == 'once_each_empty_bag'
    return samples


def embedding_bag_freq_errors(rng):
    w = R(rng, 5, 3)
    return [
        ErrorSample((np.array([1, 2]), w, _bag_offsets(0)),
                    dict(mode='max', scale_grad_by_freq=True), exc=ValueError, desc='max'),
        ErrorSample((R(rng, 2), w, _bag_offsets(0)),
                    dict(mode='max', scale_grad_by_freq=True), exc=ValueError,
                    desc='max_before_index_dtype'),
    ]


OPS = [
    OpInfo('linear', F('linear'), linear_samples, errors=linear_errors),
    OpInfo('bilinear', F('bilinear'), bilinear_samples, errors=bilinear_errors),
    OpInfo('conv1d', F('conv1d'), conv1d_samples, errors=conv_errors(1)),
    OpInfo('conv2d', F('conv2d'), conv2d_samples, errors=conv_errors(2)),
    OpInfo('conv3d', F('conv3d'), conv3d_samples, errors=conv_errors(3)),
    OpInfo('conv_transpose1d', F('conv_transpose1d'), conv_transpose1d_samples,
           errors=conv_transpose_errors(1)),
    OpInfo('conv_transpose2d', F('conv_transpose2d'), conv_transpose2d_samples,
           errors=conv_transpose_errors(2)),
    OpInfo('conv_transpose3d', F('conv_transpose3d'), conv_transpose3d_samples,
           errors=conv_transpose_errors(3)),
    OpInfo('unfold', F('unfold'), unfold_samples, errors=unfold_errors),
    OpInfo('fold', F('fold'), fold_samples, errors=fold_errors),
    OpInfo('nn.functional.embedding_bag_scale_grad_by_freq', F('embedding_bag'),
           embedding_bag_freq_samples, errors=embedding_bag_freq_errors),
]


# -- top-level forms (torch.conv2d, torch.convolution, torch.max_pool2d, ...) ---------------
# PyTorch's top-level signatures; the pooling, vision and distance ones live here too.

def top(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def top_conv_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 7), r(4, 3, 3), r(4), 2, 1), desc='conv1d_positional'),
        Sample((D(rng, 1, 1, 3), D(rng, 1, 1, 2)), desc='conv1d_tiny'),
    ]


def top_conv2d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(2, 3, 5, 4), r(4, 3, 3, 2), None, 1, (1, 0), 1, 1), desc='positional'),
            Sample((r(1, 4, 4, 4), r(4, 2, 3, 3), r(4), [2, 1], 1, 1, 2), desc='groups'),
            Sample((D(rng, 1, 1, 2, 2), D(rng, 1, 1, 1, 2)), desc='tiny')]


def top_conv3d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(1, 2, 3, 3, 3), r(2, 2, 2, 2, 2), r(2), 1, 1), desc='positional')]


def top_conv_transpose_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(2, 3, 4, 3), r(3, 2, 3, 2), r(2), 2, 1, 1, 1, 1), desc='positional'),
            Sample((D(rng, 1, 1, 2, 2), D(rng, 1, 1, 1, 2)), desc='tiny')]


def top_conv_transpose1d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(2, 3, 5), r(3, 2, 3), r(2), 2, 1, 1), desc='positional')]


def top_conv_transpose3d_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(1, 2, 2, 3, 2), r(2, 1, 2, 2, 2), None, 1, 0, 0, 1, 1),
                   desc='positional')]


def convolution_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [
        Sample((r(2, 3, 5, 4), r(4, 3, 3, 2), r(4), [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
               desc='2d'),
        Sample((r(2, 3, 7), r(4, 3, 3), None, [2], [1], [2], False, [0], 1), desc='1d'),
        Sample((r(2, 3, 4, 3), r(3, 2, 3, 2), r(2), [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
               desc='transposed_2d'),
        Sample((r(1, 4, 5), r(4, 1, 3), r(2), [1], [0], [1], True, [0], 2),
               desc='transposed_1d_groups'),
        Sample((r(1, 2, 3, 3, 3), r(2, 2, 2, 2, 2), None, [1, 1, 1], [0, 0, 0], [1, 1, 1],
                False, [0, 0, 0], 1), desc='3d'),
    ]


def convolution_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 4, 3), None, [1], [0], [1], False, [0], 1),
                        desc='weight_2d')]


def conv_tbc_samples(rng):
    r = lambda *s: SMALL(rng, *s)  # noqa: E731
    return [Sample((r(6, 2, 3), r(3, 3, 4), r(4), 1), desc='pad1', check_grad_fn=False),
            Sample((r(5, 1, 2), r(2, 2, 3), r(3)), desc='no_pad', check_grad_fn=False),
            Sample((D(rng, 3, 1, 1), D(rng, 2, 1, 1), D(rng, 1)), desc='tiny',
                   check_grad_fn=False)]


def top_bilinear_samples(rng):
    return [Sample((R(rng, 4, 3), R(rng, 4, 2), R(rng, 5, 3, 2), R(rng, 5)), desc='bias'),
            Sample((D(rng, 2, 2), D(rng, 2, 1), D(rng, 1, 2, 1)), desc='tiny')]


def constant_pad_nd_samples(rng):
    return [Sample((R(rng, 3, 4), [1, 2]), desc='last_dim'),
            Sample((R(rng, 2, 3, 4), (1, 0, 0, 2), 1.5), desc='two_dims_value'),
            Sample((R(rng, 3, 5), [-1, 1]), desc='negative'),
            Sample((D(rng, 2, 2), [1, 1, 1, 0]), dict(value=-2.0), desc='f64_kw')]


def top_pool1d_samples(rng):
    return [Sample((R(rng, 2, 3, 8), 3), desc='kernel_only'),
            Sample((R(rng, 2, 3, 8), 3, 2, 1), desc='stride_padding'),
            Sample((R(rng, 1, 2, 7), [2], [], [0]), desc='empty_stride_list'),
            Sample((D(rng, 1, 1, 6), 2), desc='f64')]


def top_max_pool1d_samples(rng):
    return top_pool1d_samples(rng) + [
        Sample((R(rng, 2, 3, 9), 3, 2, 1, 2, True), desc='dilation_ceil')]


def top_avg_pool1d_samples(rng):
    return top_pool1d_samples(rng) + [
        Sample((R(rng, 2, 3, 9), 3, 2, 1, True, False), desc='ceil_no_pad_count')]


def top_max_pool2d_samples(rng):
    return [Sample((R(rng, 2, 3, 6, 6), 3), desc='kernel_only'),
            Sample((R(rng, 1, 2, 7, 6), (3, 2), (), 1), desc='empty_stride'),
            Sample((R(rng, 1, 2, 7, 7), 3, 2, 1, 2, True), desc='all_positional'),
            Sample((D(rng, 1, 1, 4, 4), 2), desc='f64')]


def top_adaptive1d_samples(rng):
    return [Sample((R(rng, 2, 3, 8), 3), desc='3'),
            Sample((R(rng, 1, 2, 7), [4]), desc='list'),
            Sample((D(rng, 1, 1, 5), 2), desc='f64')]


def pixel_shuffle_samples(rng):
    return [Sample((R(rng, 2, 8, 3, 3), 2), desc='4d'),
            Sample((D(rng, 1, 4, 1, 2), 2), desc='f64')]


def pixel_unshuffle_samples(rng):
    return [Sample((R(rng, 2, 2, 4, 6), 2), desc='4d'),
            Sample((D(rng, 1, 1, 2, 2), 2), desc='f64')]


def _grid(rng, *shape):
    return np.asarray(rng.uniform(-0.9, 0.9, shape), dtype=np.float32)


def grid_sampler_samples(rng):
    return [Sample((R(rng, 1, 2, 4, 4), _grid(rng, 1, 3, 3, 2), 0, 0, False), desc='bilinear',
                   check_grad_fn=False),
            Sample((R(rng, 2, 1, 3, 4), _grid(rng, 2, 2, 2, 2), 1, 1, True), desc='nearest',
                   check_grad_fn=False),
            Sample((R(rng, 1, 1, 4, 4), _grid(rng, 1, 2, 3, 2) * 1.5, 0, 2, False),
                   desc='reflection', check_grad_fn=False)]


def grid_sampler_errors(rng):
    # (torch reads an out-of-range mode as garbage; dynagrad's error: tests of its own)
    return [ErrorSample((R(rng, 2, 1, 3, 3), _grid(rng, 1, 2, 2, 2), 0, 0, False),
                        desc='batch_mismatch')]


def affine_grid_generator_samples(rng):
    return [Sample((R(rng, 2, 2, 3), [2, 1, 3, 4], False), desc='2d'),
            Sample((R(rng, 1, 2, 3), (1, 3, 2, 2), True), desc='align_corners')]


def top_cosine_similarity_samples(rng):
    return [Sample((NZ(rng, 4, 3), NZ(rng, 4, 3)), desc='default_dim'),
            Sample((NZ(rng, 4, 3), NZ(rng, 4, 3), 0, 1e-6), desc='positional')]


def top_pairwise_samples(rng):
    return [Sample((R(rng, 4, 3), R(rng, 4, 3)), desc='defaults'),
            Sample((R(rng, 4, 3), R(rng, 4, 3), 1.0, 1e-5, True), desc='positional')]


def top_pdist_samples(rng):
    return [Sample((R(rng, 4, 3),), desc='default_p'),
            Sample((R(rng, 4, 3), 1.0), desc='p1')]


TOPLEVEL_OPS = [
    OpInfo('toplevel.conv1d', top('conv1d'), top_conv_samples),
    OpInfo('toplevel.conv2d', top('conv2d'), top_conv2d_samples),
    OpInfo('toplevel.conv3d', top('conv3d'), top_conv3d_samples),
    OpInfo('toplevel.conv_transpose1d', top('conv_transpose1d'),
           top_conv_transpose1d_samples),
    OpInfo('toplevel.conv_transpose2d', top('conv_transpose2d'), top_conv_transpose_samples),
    OpInfo('toplevel.conv_transpose3d', top('conv_transpose3d'),
           top_conv_transpose3d_samples),
    OpInfo('toplevel.convolution', top('convolution'), convolution_samples,
           errors=convolution_errors),
    OpInfo('toplevel.conv_tbc', top('conv_tbc'), conv_tbc_samples),
    OpInfo('toplevel.bilinear', top('bilinear'), top_bilinear_samples),
    OpInfo('toplevel.constant_pad_nd', top('constant_pad_nd'), constant_pad_nd_samples),
    OpInfo('toplevel.max_pool1d', top('max_pool1d'), top_max_pool1d_samples),
    OpInfo('toplevel.max_pool1d_with_indices', top('max_pool1d_with_indices'),
           top_max_pool1d_samples),
    OpInfo('toplevel.avg_pool1d', top('avg_pool1d'), top_avg_pool1d_samples),
    OpInfo('toplevel.max_pool2d', top('max_pool2d'), top_max_pool2d_samples),
    OpInfo('toplevel.adaptive_avg_pool1d', top('adaptive_avg_pool1d'),
           top_adaptive1d_samples),
    OpInfo('toplevel.adaptive_max_pool1d', top('adaptive_max_pool1d'),
           top_adaptive1d_samples),
    OpInfo('toplevel.pixel_shuffle', top('pixel_shuffle'), pixel_shuffle_samples),
    OpInfo('toplevel.pixel_unshuffle', top('pixel_unshuffle'), pixel_unshuffle_samples),
    OpInfo('toplevel.grid_sampler', top('grid_sampler'), grid_sampler_samples,
           errors=grid_sampler_errors),
    OpInfo('toplevel.grid_sampler_2d', top('grid_sampler_2d'), grid_sampler_samples),
    OpInfo('toplevel.affine_grid_generator', top('affine_grid_generator'),
           affine_grid_generator_samples),
    OpInfo('toplevel.cosine_similarity', top('cosine_similarity'),
           top_cosine_similarity_samples),
    OpInfo('toplevel.pairwise_distance', top('pairwise_distance'), top_pairwise_samples),
    OpInfo('toplevel.pdist', top('pdist'), top_pdist_samples),
]

OPS = OPS + TOPLEVEL_OPS
