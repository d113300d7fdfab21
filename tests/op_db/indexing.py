"""Rows for indexing, index assignment and in-place-only ops."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def _idx(*v):
    return np.asarray(v, dtype=np.int64)


def getitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    return [
        Sample((x(), 1), desc='int'),
        Sample((x(), -1), desc='neg_int'),
        Sample((x(), (1, 2)), desc='int_int'),
        Sample((x(), slice(1, None)), desc='slice'),
        Sample((x(), slice(None)), desc='full_slice'),
        Sample((x(), (slice(None), slice(None))), desc='full_slices'),
        Sample((x(), (slice(None, None, 2), slice(3, 0, -1) if False else slice(1, 4, 2))),
               desc='steps'),
        Sample((x(), (0, slice(1, 3))), desc='int_then_slice'),
        Sample((x(), (slice(1, 3), 0)), desc='slice_then_int'),
        Sample((x(), (slice(None), 2)), desc='full_then_int'),
        Sample((x(), None), desc='none'),
        Sample((x(), (Ellipsis, None)), desc='ellipsis_none'),
        Sample((x(), (0, None)), desc='int_none'),
        Sample((x(), (None, 0)), desc='none_int'),
        Sample((x(), Ellipsis), desc='ellipsis'),
        Sample((x(), (Ellipsis, 1)), desc='ellipsis_int'),
        Sample((R(rng, 2, 3, 2), (0, Ellipsis, 1)), desc='int_ellipsis_int'),
        Sample((x(), slice(5, 9)), desc='empty_slice'),
        Sample((R(rng), None), desc='0dim_none'),
        Sample((R(rng), Ellipsis), desc='0dim_ellipsis'),
        Sample((nc(R(rng, 4, 3), TR), (slice(None), 1)), desc='noncontig'),
        Sample((x(), _idx(0, 2)), desc='int_tensor'),
        Sample((x(), _idx(2, 0, 2)), desc='int_tensor_repeats'),
        Sample((x(), _idx([0, 1], [1, 1])), desc='int_tensor_2d'),
        Sample((x(), (_idx(0, 2), _idx(1, 3))), desc='int_tensor_pair'),
        Sample((x(), (slice(None), _idx(3, 0, 3))), desc='slice_int_tensor'),
        Sample((x(), (slice(1, None), [0, 2])), desc='slice_list'),
        Sample((x(), [2, 0]), desc='list'),
        Sample((x(), _idx(-1, 0)), desc='neg_int_tensor'),
        Sample((x(), mask), desc='bool_mask'),
        Sample((x(), np.array([True, False, True])), desc='bool_mask_dim0'),
        Sample((x(), np.zeros((3, 4), bool)), desc='bool_mask_empty'),
        Sample((x(), _idx()), desc='empty_int_tensor'),
        Sample((I64(rng, 3, 4), (slice(None), 1)), desc='int64_basic'),
        Sample((I64(rng, 3, 4), _idx(1, 1)), desc='int64_advanced'),
    ]


def getitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 3), exc=IndexError, desc='int_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, -5)), exc=IndexError, desc='neg_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, 0, 0)), exc=IndexError, desc='too_many'),
            ErrorSample((R(rng, 3, 4), _idx(0, 3)), exc=IndexError, desc='tensor_out_of_range'),
            ErrorSample((R(rng), 0), exc=IndexError, desc='index_0dim')]


def _setitem(lib, x, key, value):
    y = x.clone()
    y[key] = value
    return y


def setitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    return [
        Sample((x(), 1, R(rng, 4)), desc='int_tensor_value'),
        Sample((x(), 1, 2.5), desc='int_scalar'),
        Sample((x(), (slice(None), 1), R(rng, 3)), desc='column'),
        Sample((x(), (slice(None, None, 2), slice(1, 3)), R(rng, 2, 2)), desc='strided_block'),
        Sample((x(), slice(0, 2), R(rng, 4)), desc='broadcast_value'),
        Sample((x(), (0, 1), R(rng)), desc='element_0dim_value'),
        Sample((x(), Ellipsis, R(rng, 1, 4)), desc='ellipsis'),
        Sample((x(), (None, 1), R(rng, 1, 4)), desc='none'),
        Sample((x(), _idx(0, 2), R(rng, 2, 4)), desc='int_tensor'),
        Sample((x(), (_idx(0, 2), _idx(1, 3)), R(rng, 2)), desc='int_tensor_pair'),
        Sample((x(), mask, R(rng, 6)), desc='bool_mask'),
        Sample((x(), mask, -1.0), desc='bool_mask_scalar'),
        Sample((x(), (slice(None), [0, 3]), R(rng, 3, 1)), desc='list_broadcast'),
        Sample((x(), slice(5, 9), 1.0), desc='empty_region'),
        Sample((x(), 0, I64(rng, 4)), desc='int_value_into_float'),
        Sample((I64(rng, 3, 4), 0, 7), desc='int64_target'),
        Sample((F64(rng, 3, 4), 1, R(rng, 4)), desc='f32_value_into_f64'),
    ]


def setitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, R(rng, 3)), desc='value_shape'),
            ErrorSample((R(rng, 3, 4), 3, 1.0), exc=IndexError, desc='out_of_range')]


def fill_samples(rng):
    return [Sample((R(rng, 3, 4), 2.5), desc='pyfloat'),
            Sample((R(rng, 3, 4), 2), desc='pyint'),
            Sample((R(rng), -1.0), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR), 0.5), desc='noncontig'),
            Sample((I64(rng, 2, 3), 7), desc='int64')]


def zero_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng),), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64')]


def copy_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='same'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='broadcast'),
            Sample((R(rng, 3, 4), F64(rng, 3, 4)), desc='f64_into_f32'),
            Sample((F64(rng, 2, 3), R(rng, 2, 3)), desc='f32_into_f64'),
            Sample((R(rng, 2, 3), I64(rng, 2, 3)), desc='int_into_float'),
            Sample((I64(rng, 2, 3), R(rng, 2, 3)), desc='float_into_int'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig')]


def copy_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 2, 4)), desc='shape')]


OPS = [
    # indexing
    OpInfo('getitem', lambda lib, x, key: x[key], getitem_samples, errors=getitem_errors),
    OpInfo('setitem', _setitem, setitem_samples, errors=setitem_errors),
    # in-place-only ops, run as clone().op_() so they record on a non-leaf
    OpInfo('fill_', clone_then('fill_'), fill_samples, inplace='fill_'),
    OpInfo('zero_', clone_then('zero_'), zero_samples, inplace='zero_'),
    OpInfo('copy_', clone_then('copy_'), copy_samples, inplace='copy_', errors=copy_errors),
]
