"""Rows for indexing, index assignment and in-place-only ops."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def _idx(*v):
    return np.asarray(v, dtype=np.int64)


def getitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    y = lambda: R(rng, 2, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    mask3 = np.array([[True, False, True], [False, True, True]])
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
        # mixtures of basic and advanced items: NumPy's and torch's placement rules agree
        Sample((y(), (_idx(0, 1), slice(None), _idx(1, 2))), desc='adv_separated'),
        Sample((y(), (slice(None), _idx(0, 2), _idx(1, 3))), desc='adv_adjacent'),
        Sample((y(), (None, [0, 1], slice(None), [1, 2])), desc='none_adv_separated'),
        Sample((y(), (Ellipsis, _idx(3, 0, 0))), desc='ellipsis_adv_repeats'),
        Sample((y(), (_idx([1], [0]), slice(1, 3), _idx(2, 3))), desc='adv_broadcast'),
        Sample((y(), (1, slice(None), _idx(0, 3))), desc='int_slice_adv'),
        Sample((y(), (slice(0, 2), None, _idx(1, 1, 2))), desc='slice_none_adv'),
        Sample((y(), mask3), desc='bool_mask_partial'),
        Sample((y(), (slice(None), mask)), desc='slice_then_mask'),
        Sample((y(), (mask3, _idx(0, 3, 1, 1))), desc='mask_then_int_tensor'),
        Sample((y(), [[0, 1], [1, 0]]), desc='list_of_lists_is_tuple'),
        Sample((y(), [np.asarray(1), np.asarray(0)]), desc='list_of_0d_tensors_is_tuple'),
        Sample((y(), np.asarray(1)), desc='0dim_int_tensor_selects'),
        Sample((y(), (np.asarray(1), [0, 2])), desc='0dim_int_tensor_and_list'),
        Sample((y(), _idx([1, 0]).astype(np.int32)), desc='int32_tensor'),
        Sample((y(), True), desc='true'),
        Sample((y(), (False, 0)), desc='false_int'),
        Sample((y(), np.asarray(True)), desc='0dim_bool_tensor'),
        Sample((y(), []), desc='empty_list'),
        Sample((y(), (slice(1, None, 2), slice(None, None, 3), 0)), desc='steps_3d'),
        Sample((y(), (Ellipsis, slice(None, None, 2), None)), desc='ellipsis_step_none'),
        Sample((nc(R(rng, 4, 3), TR), (_idx(2, 0), slice(None, None, 2))), desc='noncontig_adv'),
        Sample((F64(rng, 3, 4), (_idx(0, 0), _idx(1, 1))), desc='f64_repeats'),
        Sample((R(rng, 5), slice(-3, None)), desc='negative_start'),
    ]


def getitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 3), exc=IndexError, desc='int_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, -5)), exc=IndexError, desc='neg_out_of_range'),
            ErrorSample((R(rng, 3, 4), (0, 0, 0)), exc=IndexError, desc='too_many'),
            ErrorSample((R(rng, 3, 4), _idx(0, 3)), exc=IndexError, desc='tensor_out_of_range'),
            ErrorSample((R(rng), 0), exc=IndexError, desc='index_0dim'),
            ErrorSample((R(rng, 3, 4), slice(None, None, -1)), exc=ValueError,
                        desc='negative_step'),
            ErrorSample((R(rng, 3, 4), (0, slice(None, None, 0))), exc=ValueError,
                        desc='zero_step'),
            ErrorSample((R(rng, 3, 4), np.array([1.0])), exc=IndexError, desc='float_tensor'),
            ErrorSample((R(rng, 3, 4), np.array([1], np.int16)), exc=IndexError,
                        desc='int16_tensor'),
            ErrorSample((R(rng, 3, 4), 1.0), exc=IndexError, desc='float_key'),
            ErrorSample((R(rng, 2, 3, 4), np.array([True, False, True])), exc=IndexError,
                        desc='mask_shape'),
            ErrorSample((R(rng, 2, 3, 4), (slice(None), _idx(-4))), exc=IndexError,
                        desc='tensor_negative_out_of_range'),
            ErrorSample((R(rng, 3, 4), (_idx(0, 1), _idx(0, 1, 2))), exc=IndexError,
                        desc='index_shapes_mismatch'),
            ErrorSample((R(rng), [0]), exc=IndexError, desc='list_into_0dim')]


def _setitem(lib, x, key, value):
    y = x.clone()
    y[key] = value
    return y


def setitem_samples(rng):
    x = lambda: R(rng, 3, 4)  # noqa: E731
    y = lambda: R(rng, 2, 3, 4)  # noqa: E731
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    mask3 = np.array([[True, False, True], [False, True, True]])
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
        # advanced keys: gradients to both the target's history and the value
        Sample((y(), (_idx(0, 1), slice(None), _idx(1, 2)), R(rng, 3)), desc='adv_separated'),
        Sample((y(), (slice(None), _idx(0, 2)), R(rng, 2, 1, 4)), desc='adv_broadcast_value'),
        Sample((y(), (None, _idx(1), Ellipsis, _idx(0, 3)), R(rng, 2, 1, 1)),
               desc='none_ellipsis'),
        Sample((y(), mask3, R(rng, 4)), desc='mask_partial_broadcast'),
        Sample((x(), mask, np.asarray(2.0)), desc='mask_0dim_f64_value'),
        Sample((x(), mask, R(rng)), desc='mask_0dim_value'),
        Sample((x(), [1, 2], 0.5), desc='list_scalar'),
        Sample((x(), np.asarray(1), R(rng, 4)), desc='0dim_int_tensor_key'),
        Sample((x(), (_idx(0, 2), slice(None, None, 2)), R(rng, 2, 2)), desc='adv_step'),
        Sample((x(), _idx(0, 2), R(rng, 1, 1, 4)), desc='value_leading_ones'),
        Sample((nc(R(rng, 4, 3), TR), (slice(None), _idx(1)), R(rng, 3, 1)), desc='noncontig'),
        Sample((I64(rng, 3, 4), mask, 2), desc='int64_mask'),
        Sample((x(), (slice(1, None, 2), 0), R(rng, 1)), desc='step_int'),
    ]


def setitem_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, R(rng, 3)), desc='value_shape'),
            ErrorSample((R(rng, 3, 4), 3, 1.0), exc=IndexError, desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), _idx(3), 1.0), exc=IndexError,
                        desc='tensor_out_of_range'),
            ErrorSample((R(rng, 3, 4), slice(None, None, -1), 1.0), exc=ValueError,
                        desc='negative_step'),
            ErrorSample((R(rng, 3, 4), _idx(0, 1), F64(rng, 4)), desc='adv_dtype_mismatch'),
            ErrorSample((R(rng, 3, 4), _idx(0, 1), R(rng, 3)), desc='adv_value_shape'),
            ErrorSample((R(rng, 3, 4), 0, [1.0, 2.0, 3.0, 4.0]), exc=TypeError,
                        desc='list_value')]


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



# -- select, index_select, gather, take, take_along_dim ---------------------------------------

def _i32(*v):
    return np.asarray(v, dtype=np.int32)


def select_samples(rng):
    return [Sample((R(rng, 3, 4), 0, 1), desc='dim0'),
            Sample((R(rng, 3, 4), -1, -2), desc='neg_dim_neg_index'),
            Sample((R(rng, 2, 3, 4), 1, 2), desc='3d_middle'),
            Sample((R(rng, 3), 0, 2), desc='to_0dim'),
            Sample((nc(R(rng, 4, 3), TR), 1, 0), desc='noncontig'),
            Sample((R(rng, 0, 3), 1, 2), desc='empty'),
            Sample((I64(rng, 3, 4), 1, 3), desc='int64')]


def select_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, 3), exc=IndexError, desc='index_out_of_range'),
            ErrorSample((R(rng, 3, 4), 2, 0), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng), 0, 0), exc=IndexError, desc='0dim')]


def index_select_samples(rng):
    return [Sample((R(rng, 3, 4), 0, _idx(2, 0)), desc='dim0'),
            Sample((R(rng, 3, 4), 1, _idx(3, 3, 0)), desc='dim1_repeats'),
            Sample((R(rng, 2, 3, 4), -2, _idx(1)), desc='3d_neg_dim'),
            Sample((R(rng, 3, 4), 1, np.asarray(1)), desc='0dim_index'),
            Sample((R(rng, 3, 4), 0, _i32(1, 2)), desc='int32_index'),
            Sample((R(rng, 3, 4), 0, _idx()), desc='empty_index'),
            Sample((R(rng), 0, _idx(0)), desc='0dim_input'),
            Sample((nc(R(rng, 4, 3), TR), 1, _idx(0, 3)), desc='noncontig'),
            Sample((F64(rng, 3, 2), 0, _idx(1, 1)), desc='f64'),
            Sample((I64(rng, 3, 4), 1, _idx(0, 2)), desc='int64')]


def index_select_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, _idx([1])), exc=IndexError, desc='2d_index'),
            ErrorSample((R(rng, 3, 4), 1, np.array([1.0])), desc='float_index'),
            ErrorSample((R(rng, 3, 4), 1, _idx(4)), desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 1, _idx(-1)), desc='negative'),
            ErrorSample((R(rng, 3, 4), 2, _idx(0)), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng), 0, _idx(0, 0)), desc='0dim_two_indices')]


def gather_samples(rng):
    return [Sample((R(rng, 3, 4), 1, _idx([0, 1], [2, 3], [1, 1])), desc='dim1'),
            Sample((R(rng, 3, 4), 0, _idx([0, 2, 1, 0])), desc='dim0_smaller'),
            Sample((R(rng, 3, 4), 0, _idx(*[[0, 1, 2, 2]] * 5)), desc='index_longer_on_dim'),
            Sample((R(rng, 3, 4), -1, _idx([3, 3, 3], [0, 0, 1])), desc='neg_dim_repeats'),
            Sample((R(rng, 2, 3, 2), 1, _idx([[0, 1], [2, 2]], [[1, 0], [0, 0]])), desc='3d'),
            Sample((R(rng, 3, 4), 1, _i32([0], [1], [2])), desc='int32_index'),
            Sample((R(rng, 3, 4), 0, np.zeros((0, 4), np.int64)), desc='empty_index'),
            Sample((R(rng), 0, np.asarray(0)), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR), 0, _idx([1, 0, 2])), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx([0], [3], [1])), desc='int64')]


def gather_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, _idx([5, 1])), desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 0, _idx([-1, 1])), desc='negative'),
            ErrorSample((R(rng, 3, 4), 0, _idx(0, 1)), desc='ndim_mismatch'),
            ErrorSample((R(rng, 3, 4), 0, _idx([0, 1, 0, 0, 0])), desc='too_large'),
            ErrorSample((R(rng, 3, 4), 0, np.zeros((1, 4))), desc='float_index'),
            ErrorSample((R(rng, 3, 4), 2, _idx([0])), exc=IndexError, desc='dim_out_of_range')]


def take_samples(rng):
    return [Sample((R(rng, 3, 4), _idx([0, 11], [-1, 3])), desc='2d_index_negative'),
            Sample((R(rng, 3, 4), _idx(5, 5, 0)), desc='repeats'),
            Sample((R(rng), _idx(0, 0)), desc='0dim_input'),
            Sample((R(rng, 2, 3), np.asarray(4)), desc='0dim_index'),
            Sample((R(rng, 2, 3), _idx()), desc='empty_index'),
            Sample((nc(R(rng, 4, 3), TR), _idx(1, 7)), desc='noncontig'),
            Sample((I64(rng, 2, 3), _idx(1, 2)), desc='int64')]


def take_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _idx(12)), exc=IndexError, desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), _idx(-13)), exc=IndexError, desc='negative_out_of_range'),
            ErrorSample((R(rng, 3, 4), _i32(1)), desc='int32_index')]


def take_along_dim_samples(rng):
    return [Sample((R(rng, 3, 4), _idx([0], [1], [3]), 1), desc='dim1'),
            Sample((R(rng, 3, 4), _idx([0, 1]), 1), desc='broadcast_indices'),
            Sample((R(rng, 1, 4), _idx([0], [3]), 1), desc='broadcast_input'),
            Sample((R(rng, 3, 4), _idx([-1], [0], [0]), -2), desc='negative_repeats'),
            Sample((R(rng, 3, 4), _idx(0, 11, 3, 3)), desc='no_dim'),
            Sample((R(rng, 2, 3, 2), _idx([[1], [0], [1]]), 2), desc='3d'),
            Sample((I64(rng, 3, 4), _idx([2], [1], [0]), 1), desc='int64')]


def take_along_dim_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _idx(1), 1), desc='ndim_mismatch'),
            ErrorSample((R(rng, 3, 4), _i32([1]), 1), desc='int32_index')]


# -- scatter family -----------------------------------------------------------------------------

def scatter_samples(rng):
    return [Sample((R(rng, 3, 4), 0, _idx([1, 2, 0, 1]), R(rng, 1, 4)), desc='dim0'),
            # src larger than index: torch's backward fails (shape of src's gradient);
            # forward only here, gradients in test_indexing_extra.py
            Sample((R(rng, 3, 4), 1, _idx([3, 0], [1, 2]), R(rng, 2, 3)), desc='src_larger',
                   requires_grad=False),
            Sample((R(rng, 3, 4), -1, _idx([2], [0], [1]), R(rng, 3, 1)), desc='neg_dim'),
            Sample((R(rng, 3, 4), 0, _idx([1, 2]), 5.0), desc='value'),
            Sample((R(rng, 3, 4), 0, _idx([1, 2]), 2), desc='int_value'),
            Sample((R(rng, 2, 3, 2), 2, _idx([[1], [0]], [[0], [1]]), R(rng, 2, 2, 1)),
                   desc='3d'),
            Sample((R(rng, 3, 4), 0, _i32([2, 0]), R(rng, 1, 2)), desc='int32_index'),
            Sample((R(rng, 3, 4), 0, np.zeros((0, 4), np.int64), R(rng, 1, 4)),
                   desc='empty_index'),
            Sample((nc(R(rng, 4, 3), TR), 1, _idx([0, 2]), R(rng, 1, 2)), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx([0, 1]), I64(rng, 1, 2)), desc='int64'),
            # legacy reduce: forward only (torch defines no derivative)
            Sample((R(rng, 3, 4), 0, _idx([1, 1]), R(rng, 1, 2)), dict(reduce='add'),
                   desc='reduce_add', requires_grad=False),
            Sample((R(rng, 3, 4), 0, _idx([1, 1]), 2.0), dict(reduce='multiply'),
                   desc='reduce_multiply_value', requires_grad=False)]


def scatter_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, _idx([3, 2]), 1.0), desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 0, _idx([-1, 2]), 1.0), desc='negative'),
            ErrorSample((R(rng, 3, 4), 0, _idx([1, 2]), F64(rng, 1, 2)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), 0, _idx([1, 2]), R(rng, 1, 1)), desc='src_too_small'),
            ErrorSample((R(rng, 3, 4), 0, _idx(1, 2), 1.0), desc='ndim'),
            ErrorSample((R(rng, 3, 4), 0, np.zeros((1, 2)), 1.0), desc='float_index'),
            ErrorSample((R(rng, 3, 4), 0, _idx([1, 2]), 1.0), dict(reduce='mean'),
                        desc='bad_reduce')]


def scatter_add_samples(rng):
    return [Sample((R(rng, 3, 4), 0, _idx([1, 1, 0, 1], [2, 1, 0, 1]), R(rng, 2, 4)),
                   desc='dim0_repeats'),
            Sample((R(rng, 3, 4), 1, _idx([3, 3], [1, 2]), R(rng, 2, 3)), desc='src_larger',
                   requires_grad=False),   # torch's backward fails: see scatter
            Sample((R(rng, 2, 3, 2), -2, _idx([[0, 0], [0, 2]], [[1, 1], [1, 1]]),
                    R(rng, 2, 2, 2)), desc='3d'),
            Sample((R(rng, 3, 4), 0, _i32([2, 0]), R(rng, 1, 2)), desc='int32_index'),
            Sample((R(rng), 0, np.asarray(0), R(rng)), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR), 1, _idx([0, 0]), R(rng, 1, 2)), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx([0, 0]), I64(rng, 1, 2)), desc='int64')]


def scatter_add_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, _idx([3, 2]), R(rng, 1, 2)), desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 0, _idx([1, 2]), F64(rng, 1, 2)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), 0, _idx([1, 2, 0, 0, 0]), R(rng, 1, 5)),
                        desc='too_large')]


def scatter_reduce_samples(rng):
    s = []
    idx = _idx([0, 1, 0], [2, 0, 0])          # repeats within columns
    for reduce in ('sum', 'prod', 'mean', 'amax', 'amin'):
        for include_self in (True, False):
            s.append(Sample((NZ(rng, 3, 3), 0, idx, NZ(rng, 2, 3), reduce),
                            dict(include_self=include_self),
                            desc=f'{reduce}_self{int(include_self)}'))
        s.append(Sample((NZ(rng, 2, 4), 1, _idx([3, 3], [0, 1]), NZ(rng, 2, 3), reduce),
                        desc=f'{reduce}_src_larger', requires_grad=False))  # see scatter
        s.append(Sample((I64NZ(rng, 3, 3), 0, idx, I64NZ(rng, 2, 3), reduce),
                        dict(include_self=False), desc=f'{reduce}_int64'))
    # ties: torch shares the gradient evenly among equal values (a kink: no gradcheck)
    tie = np.array([[1.0, 2.0], [3.0, 0.5]], np.float32)
    s.append(Sample((tie, 0, _idx([1, 0], [1, 1]), np.array([[3.0, 2.0], [3.0, 0.5]],
                                                           np.float32), 'amax'),
                    desc='amax_ties', gradcheck=False))
    s.append(Sample((tie, 0, _idx([0, 0], [0, 1]), np.array([[1.0, 2.0], [1.0, 0.5]],
                                                           np.float32), 'amin'),
                    dict(include_self=False), desc='amin_ties', gradcheck=False))
    # zeros in a product: the gradient is the product of the others (> 12 elements, so
    # only compared with torch; the second derivative there is not formed)
    z = NZ(rng, 3, 5)
    z[0, 1] = z[2, 3] = z[1, 3] = 0
    src = NZ(rng, 2, 5)
    src[1, 1] = 0
    s.append(Sample((z, 0, _idx([0, 0, 2, 1, 0], [1, 0, 1, 2, 0]), src, 'prod'),
                    desc='prod_zeros'))
    s.append(Sample((z, 0, _idx([0, 0, 2, 1, 0], [1, 0, 1, 2, 0]), src, 'prod'),
                    dict(include_self=False), desc='prod_zeros_noself'))
    return s


def scatter_reduce_errors(rng):
    return [ErrorSample((R(rng, 3), 0, _idx(0, 1), R(rng, 2), 'max_'), desc='bad_reduce'),
            ErrorSample((R(rng, 3), 0, _idx(0, 3), R(rng, 2), 'sum'), desc='out_of_range'),
            ErrorSample((R(rng, 3), 0, _idx(0, 1), F64(rng, 2), 'sum'), desc='dtype')]


# -- index_add, index_copy, index_fill, index_put -----------------------------------------------

def index_add_samples(rng):
    return [Sample((R(rng, 3, 4), 1, _idx(0, 2), R(rng, 3, 2)), desc='dim1'),
            Sample((R(rng, 3, 4), 0, _idx(1, 1, 0), R(rng, 3, 4)), desc='repeats'),
            Sample((R(rng, 3, 4), 1, _idx(3, 0), R(rng, 3, 2)), dict(alpha=2.5), desc='alpha'),
            Sample((R(rng, 3, 4), 1, np.asarray(1), R(rng, 3, 1)), desc='0dim_index'),
            Sample((R(rng, 2, 3, 2), -1, _i32(1), R(rng, 2, 3, 1)), desc='int32_neg_dim'),
            Sample((R(rng, 3, 4), 0, _idx(), R(rng, 0, 4)), desc='empty_index'),
            Sample((nc(R(rng, 4, 3), TR), 0, _idx(2), R(rng, 1, 4)), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx(0, 0), I64(rng, 3, 2)), dict(alpha=2),
                   desc='int64')]


def index_add_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, _idx(0, 2), R(rng, 3, 3)), desc='source_shape'),
            ErrorSample((R(rng, 3, 4), 1, _idx(0, 2), F64(rng, 3, 2)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), 1, _idx(4, 0), R(rng, 3, 2)), desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 1, _idx(-1, 0), R(rng, 3, 2)), desc='negative'),
            ErrorSample((R(rng, 3, 4), 1, _idx([1]), R(rng, 3, 1)), exc=IndexError,
                        desc='2d_index'),
            ErrorSample((R(rng, 3, 4), 1, np.array([1.0]), R(rng, 3, 1)), desc='float_index')]


def index_copy_samples(rng):
    return [Sample((R(rng, 3, 4), 1, _idx(0, 2), R(rng, 3, 2)), desc='dim1'),
            Sample((R(rng, 3, 4), 0, _idx(2, 0), R(rng, 2, 4)), desc='dim0'),
            Sample((R(rng, 2, 3, 2), -2, np.asarray(1), R(rng, 2, 1, 2)), desc='0dim_index'),
            Sample((R(rng, 3, 4), 0, _idx(), R(rng, 0, 4)), desc='empty_index'),
            Sample((nc(R(rng, 4, 3), TR), 1, _idx(3, 1), R(rng, 3, 2)), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx(1), I64(rng, 3, 1)), desc='int64')]


def index_copy_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, _i32(0, 2), R(rng, 3, 2)), desc='int32_index'),
            ErrorSample((R(rng, 3, 4), 1, _idx(0, 2), F64(rng, 3, 2)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), 1, _idx(4, 0), R(rng, 3, 2)), exc=IndexError,
                        desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 1, _idx(0, 2), R(rng, 3, 3)), exc=IndexError,
                        desc='source_shape')]


def index_fill_samples(rng):
    return [Sample((R(rng, 3, 4), 1, _idx(0, 2), 2.5), desc='scalar'),
            Sample((R(rng, 3, 4), 1, _idx(0, 2, 2), R(rng)), desc='tensor_value_repeats'),
            Sample((R(rng, 3, 4), 1, _idx(1), F64(rng)), desc='f64_tensor_value'),
            Sample((R(rng, 3, 4), 1, _idx(-1), -1.0), desc='negative_index'),
            Sample((R(rng, 2, 3, 2), 0, np.asarray(1), 0), desc='0dim_index_int_value'),
            Sample((R(rng, 3, 4), 0, _idx(), 1.0), desc='empty_index'),
            Sample((nc(R(rng, 4, 3), TR), 0, _idx(2), 1.0), desc='noncontig'),
            Sample((I64(rng, 3, 4), 1, _idx(0), 7), desc='int64')]


def index_fill_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, _i32(0), 1.0), exc=IndexError, desc='int32_index'),
            ErrorSample((R(rng, 3, 4), 1, _idx(4), 1.0), exc=IndexError, desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), 1, _idx(0), R(rng, 1)), desc='1d_value')]


def index_put_samples(rng):
    mask = np.array([[True, False, True, False], [False, False, True, True],
                     [True, True, False, False]])
    return [Sample((R(rng, 3, 4), (_idx(0, 2),), R(rng, 4)), desc='rows_broadcast'),
            Sample((R(rng, 3, 4), (_idx(0, 2), _idx(1, 3)), R(rng, 2)), desc='pairs'),
            Sample((R(rng, 3, 4), (_idx(1, 1, 0), _idx(2, 2, 0)), R(rng, 3)),
                   dict(accumulate=True), desc='accumulate_repeats'),
            Sample((R(rng, 3, 4), (_idx(1, 1),), R(rng, 1)), dict(accumulate=True),
                   desc='accumulate_broadcast'),
            Sample((R(rng, 3, 4), (mask,), R(rng)), desc='mask_0dim_value'),
            Sample((R(rng, 3, 4), [_idx(2)], R(rng, 1, 4)), desc='list_indices'),
            Sample((R(rng, 2, 3, 2), (_idx(1), _idx(0, 2)), R(rng, 2, 2)), desc='3d_partial'),
            Sample((I64(rng, 3, 4), (_idx(0),), I64(rng, 4)), desc='int64')]


def index_put_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _idx(0), R(rng, 4)), exc=TypeError,
                        desc='indices_not_tuple'),
            ErrorSample((R(rng, 3, 4), (_idx(0),), F64(rng, 4)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), (_idx(3),), R(rng, 4)), exc=IndexError,
                        desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), (_idx(0, 1),), R(rng, 3)), desc='value_shape')]


# -- masks, put, nonzero ------------------------------------------------------------------------

_M4 = np.array([True, False, True, False])
_M34 = np.array([[True, False, True, False], [False, False, False, True],
                 [True, True, False, False]])


def masked_fill_samples(rng):
    return [Sample((R(rng, 3, 4), _M34, 2.5), desc='scalar'),
            Sample((R(rng, 3, 4), _M4, R(rng)), desc='broadcast_mask_tensor_value'),
            Sample((R(rng, 3, 4), _M4, F64(rng)), desc='f64_tensor_value'),
            Sample((R(rng, 4), np.array([[True], [False]]), -1.0), desc='broadcast_output'),
            Sample((R(rng), np.asarray(True), 3), desc='0dim'),
            Sample((R(rng, 0, 4), _M4, 1.0), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), _M34, 0.5), desc='noncontig'),
            Sample((I64(rng, 3, 4), _M34, 2.5), desc='int64_float_value'),
            Sample((B(rng, 3, 4), _M34, True), desc='bool')]


def masked_fill_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _M4.astype(np.float32), 1.0), desc='float_mask'),
            ErrorSample((R(rng, 3, 4), _M4, R(rng, 1)), desc='1d_value'),
            ErrorSample((R(rng, 3, 4), np.array([True, False]), 1.0), desc='mask_shape'),
            ErrorSample((R(rng, 4), np.array([[True], [False]]), 1.0), variant='inplace',
                        desc='inplace_broadcast'),
            ErrorSample((R(rng, 3, 4), _M4, 2 + 1j), desc='complex_value_real_input')]


def masked_scatter_samples(rng):
    return [Sample((R(rng, 3, 4), _M34, R(rng, 3, 4)), desc='same_shape'),
            Sample((R(rng, 3, 4), _M4, R(rng, 7)), desc='broadcast_mask_larger_source'),
            Sample((R(rng, 4), np.array([[True], [False]]), R(rng, 2, 3)),
                   desc='broadcast_output'),
            Sample((R(rng, 3, 4), np.zeros((3, 4), bool), R(rng, 2)), desc='empty_mask'),
            Sample((nc(R(rng, 4, 3), TR), _M34, R(rng, 6)), desc='noncontig'),
            Sample((I64(rng, 3, 4), _M34, I64(rng, 6)), desc='int64')]


def masked_scatter_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _M34, R(rng, 3)), desc='source_too_small'),
            ErrorSample((R(rng, 3, 4), _M34, F64(rng, 12)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), _M34.astype(np.float32), R(rng, 12)), desc='float_mask')]


def masked_select_samples(rng):
    return [Sample((R(rng, 3, 4), _M34), desc='same_shape'),
            Sample((R(rng, 3, 4), _M4), desc='broadcast_mask'),
            Sample((R(rng, 4), np.array([[True], [False], [True]])), desc='broadcast_input'),
            Sample((R(rng), np.asarray(True)), desc='0dim'),
            Sample((R(rng, 3, 4), np.zeros(4, bool)), desc='none_selected'),
            Sample((nc(R(rng, 4, 3), TR), _M34), desc='noncontig'),
            Sample((I64(rng, 3, 4), _M34), desc='int64')]


def masked_select_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _M4.astype(np.float32)), desc='float_mask'),
            ErrorSample((R(rng, 3, 4), np.array([True, False])), desc='mask_shape')]


def put_samples(rng):
    return [Sample((R(rng, 3, 4), _idx(1, -1), R(rng, 2)), desc='negative_index'),
            Sample((R(rng, 3, 4), _idx([0, 5], [7, 11]), R(rng, 4)), desc='2d_index'),
            Sample((R(rng, 3, 4), _idx(1, 1, 2), R(rng, 3)), dict(accumulate=True),
                   desc='accumulate_repeats'),
            Sample((R(rng, 3, 4), _idx(1, 2), R(rng, 2, 1)), desc='2d_source'),
            Sample((R(rng), _idx(0), R(rng, 1)), desc='0dim'),
            Sample((R(rng, 3, 4), _idx(), R(rng, 0)), desc='empty_index'),
            Sample((I64(rng, 3, 4), _idx(3), I64(rng, 1)), desc='int64')]


def put_errors(rng):
    return [ErrorSample((R(rng, 3, 4), _idx(1, 2), R(rng, 3)), exc=IndexError,
                        desc='count_mismatch'),
            ErrorSample((R(rng, 3, 4), _idx(12), R(rng, 1)), exc=IndexError,
                        desc='out_of_range'),
            ErrorSample((R(rng, 3, 4), _idx(1), F64(rng, 1)), desc='dtype'),
            ErrorSample((R(rng, 3, 4), _i32(1), R(rng, 1)), desc='int32_index')]


def nonzero_samples(rng):
    z = R(rng, 3, 4)
    z[z < 0] = 0
    return [Sample((z,), desc='2d'),
            Sample((B(rng, 2, 3, 2),), desc='bool_3d'),
            Sample((I64(rng, 5),), desc='int64_1d'),
            Sample((np.asarray(3.0, np.float32),), desc='0dim_nonzero'),
            Sample((np.asarray(0.0, np.float32),), desc='0dim_zero'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((z,), dict(as_tuple=True), desc='as_tuple'),
            Sample((np.asarray(3.0, np.float32),), dict(as_tuple=True), desc='as_tuple_0dim'),
            Sample((np.zeros((2, 2), np.float32),), dict(as_tuple=True), desc='as_tuple_none')]


def argwhere_samples(rng):
    return [s for s in nonzero_samples(rng) if not s.kwargs]

OPS = [
    # indexing
    OpInfo('getitem', lambda lib, x, key: x[key], getitem_samples, errors=getitem_errors),
    OpInfo('setitem', _setitem, setitem_samples, errors=setitem_errors),
    OpInfo('select', None, select_samples, method='select', errors=select_errors),
    OpInfo('index_select', None, index_select_samples, method='index_select',
           errors=index_select_errors),
    OpInfo('gather', None, gather_samples, method='gather', errors=gather_errors),
    OpInfo('take', None, take_samples, method='take', errors=take_errors),
    OpInfo('take_along_dim', None, take_along_dim_samples, method='take_along_dim',
           errors=take_along_dim_errors),
    OpInfo('scatter', None, scatter_samples, method='scatter', inplace='scatter_',
           errors=scatter_errors),
    OpInfo('scatter_add', None, scatter_add_samples, method='scatter_add',
           inplace='scatter_add_', errors=scatter_add_errors),
    OpInfo('scatter_reduce', None, scatter_reduce_samples, method='scatter_reduce',
           inplace='scatter_reduce_', errors=scatter_reduce_errors),
    OpInfo('index_add', None, index_add_samples, method='index_add', inplace='index_add_',
           errors=index_add_errors),
    OpInfo('index_copy', None, index_copy_samples, method='index_copy', inplace='index_copy_',
           errors=index_copy_errors),
    OpInfo('index_fill', None, index_fill_samples, method='index_fill', inplace='index_fill_',
           errors=index_fill_errors),
    OpInfo('index_put', None, index_put_samples, method='index_put', inplace='index_put_',
           errors=index_put_errors),
    OpInfo('masked_fill', None, masked_fill_samples, method='masked_fill',
           inplace='masked_fill_', errors=masked_fill_errors),
    OpInfo('masked_scatter', None, masked_scatter_samples, method='masked_scatter',
           inplace='masked_scatter_', errors=masked_scatter_errors),
    OpInfo('masked_select', None, masked_select_samples, method='masked_select',
           errors=masked_select_errors),
    OpInfo('put', None, put_samples, method='put', inplace='put_', errors=put_errors),
    OpInfo('nonzero', None, nonzero_samples, method='nonzero', differentiable=False),
    OpInfo('argwhere', None, argwhere_samples, method='argwhere', differentiable=False),
    # in-place-only ops, run as clone().op_() so they record on a non-leaf
    OpInfo('fill_', clone_then('fill_'), fill_samples, inplace='fill_'),
    OpInfo('zero_', clone_then('zero_'), zero_samples, inplace='zero_'),
    OpInfo('copy_', clone_then('copy_'), copy_samples, inplace='copy_', errors=copy_errors),
]


# -- issue 16: index_reduce ------------------------------------------------------------------

def index_reduce_samples(rng):
    s = []
    for reduce in ('prod', 'mean', 'amax', 'amin'):
        for include_self in (True, False):
            s.append(Sample((NZ(rng, 4, 3), 0, _idx(0, 2, 0), NZ(rng, 3, 3), reduce),
                            dict(include_self=include_self),
                            desc=f'{reduce}_self{int(include_self)}'))
        s.append(Sample((NZ(rng, 2, 3), 1, _idx(2, 2, 0, 2), NZ(rng, 2, 4), reduce),
                        desc=f'{reduce}_dim1'))
        s.append(Sample((I64NZ(rng, 3, 2), 0, _idx(1, 1), I64NZ(rng, 2, 2), reduce),
                        dict(include_self=False), desc=f'{reduce}_int64'))
    s.append(Sample((NZ(rng, 3), 0, _idx(1, 1).astype(np.int32), NZ(rng, 2), 'prod'),
                    desc='1d_int32_index'))
    s.append(Sample((nc(NZ(rng, 3, 4), TR), 1, _idx(0, 2), NZ(rng, 4, 2), 'mean'),
                    desc='noncontig'))
    tie = np.array([[1.0, 2.0], [3.0, 0.5]], np.float32)
    s.append(Sample((tie, 0, _idx(1, 1), np.array([[3.0, 2.0], [3.0, 0.5]], np.float32),
                     'amax'), desc='amax_ties', gradcheck=False))
    z = NZ(rng, 3, 4)
    z[0, 1] = z[2, 3] = 0
    src = NZ(rng, 2, 4)
    src[1, 1] = src[0, 3] = 0
    s.append(Sample((z, 0, _idx(0, 2), src, 'prod'), desc='prod_zeros'))
    return s


def index_reduce_errors(rng):
    return [ErrorSample((R(rng, 3, 2), 0, _idx(0, 1), R(rng, 2, 2), 'sum'), desc='bad_reduce'),
            ErrorSample((R(rng, 3, 2), 0, np.array([0.0, 1.0]), R(rng, 2, 2), 'prod'),
                        desc='float_index'),
            ErrorSample((R(rng, 3, 2), 0, _idx(0, 3), R(rng, 2, 2), 'prod'), exc=IndexError,
                        desc='index_range'),
            ErrorSample((R(rng, 3, 2), 0, _idx(-1, 0), R(rng, 2, 2), 'prod'), exc=IndexError,
                        desc='negative_index'),
            ErrorSample((R(rng, 3, 2), 0, _idx(0, 1), F64(rng, 2, 2), 'prod'),
                        desc='dtype_mismatch'),
            ErrorSample((R(rng, 3, 2), 0, _idx(0, 1, 2), R(rng, 2, 2), 'prod'),
                        desc='count_mismatch')]


OPS += [
    OpInfo('index_reduce', None, index_reduce_samples, method='index_reduce',
           inplace='index_reduce_', errors=index_reduce_errors),
]
