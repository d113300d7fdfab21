"""Rows for shape ops and views."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def reshape_samples(rng):
    return [Sample((R(rng, 3, 4), (4, 3)), desc='2d'),
            Sample((R(rng, 3, 4), (-1,)), desc='infer'),
            Sample((R(rng, 3, 4), (2, -1, 2)), desc='infer_mid'),
            Sample((R(rng, 3, 4), 12), desc='int_arg', method_only=True),
            Sample((R(rng, 3, 4), 2, 6), desc='varargs', method_only=True),
            Sample((R(rng, 1, 1), ()), desc='to_0dim'),
            Sample((R(rng), (1, 1)), desc='from_0dim'),
            Sample((R(rng, 0, 3), (3, 0)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (-1,)), desc='noncontig_copy'),
            Sample((nc(R(rng, 2, 3, 2), TR), (2, 6)), desc='noncontig_copy_3d'),
            Sample((I64(rng, 2, 3), (3, 2)), desc='int64')]


def reshape_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (5, -1)), desc='not_divisible'),
            ErrorSample((R(rng, 3, 4), (5, 2)), desc='wrong_numel'),
            ErrorSample((R(rng, 3, 4), (-1, -1)), desc='two_infers')]


def view_samples(rng):
    return [s for s in reshape_samples(rng) if 'noncontig' not in s.desc] + [
        Sample((nc(R(rng, 3, 4), TR), (4, 3, 1)), desc='noncontig_compatible')]


def view_errors(rng):
    return reshape_errors(rng) + [
        ErrorSample((nc(R(rng, 4, 3), TR), (-1,)), desc='noncontig_incompatible')]


def view_as_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 2, 6)), desc='2d'),
            Sample((R(rng, 1), R(rng)), desc='to_0dim'),
            Sample((R(rng, 0, 2), R(rng, 2, 0)), desc='empty'),
            Sample((I64(rng, 2, 3), R(rng, 6)), desc='int64')]


def flatten_samples(rng):
    return [Sample((R(rng, 2, 3, 2),), desc='all'),
            Sample((R(rng, 2, 3, 2), 1), desc='start1'),
            Sample((R(rng, 2, 3, 2), 0, 1), desc='start0_end1'),
            Sample((R(rng, 2, 3, 2),), dict(start_dim=-2, end_dim=-1), desc='negative'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig')]


def flatten_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 2), 2, 0), desc='start_after_end'),
            ErrorSample((R(rng, 2, 3), 3), exc=IndexError, desc='dim_out_of_range')]


def transpose_samples(rng):
    return [Sample((R(rng, 3, 4), 0, 1), desc='2d'),
            Sample((R(rng, 2, 3, 2), 0, -1), desc='3d_neg'),
            Sample((R(rng, 2, 3, 2), 1, 1), desc='same_dim'),
            Sample((R(rng), 0, -1), desc='0dim'),
            Sample((R(rng, 0, 3), 0, 1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1, 0), desc='noncontig'),
            Sample((I64(rng, 2, 3), 0, 1), desc='int64')]


def transpose_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 0, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -3, 0), exc=IndexError, desc='neg_out_of_range')]


def t_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 4),), desc='1d'),
            Sample((R(rng),), desc='0dim', check_grad_fn=False),
            Sample((R(rng, 0, 2),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig')]


def t_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 2),), desc='3d')]


def mT_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def bigT_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 4),), desc='1d'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def permute_samples(rng):
    return [Sample((R(rng, 2, 3, 2), (2, 0, 1)), desc='tuple'),
            Sample((R(rng, 2, 3, 2), 1, 0, 2), desc='varargs',
                   method_only=True),
            Sample((R(rng, 2, 3, 2), (-1, 0, -2)), desc='negative'),
            Sample((R(rng), ()), desc='0dim'),
            Sample((R(rng, 0, 3), (1, 0)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (1, 0)), desc='noncontig')]


def permute_errors(rng):
    return [ErrorSample((R(rng, 2, 3), (0,)), desc='too_few'),
            ErrorSample((R(rng, 2, 3), (0, 0)), desc='duplicate'),
            ErrorSample((R(rng, 2, 3), (0, 2)), exc=IndexError, desc='out_of_range')]


def squeeze_samples(rng):
    return [Sample((R(rng, 3, 1, 4, 1),), desc='all'),
            Sample((R(rng, 3, 1, 4), 1), desc='dim'),
            Sample((R(rng, 3, 1, 4), 0), desc='dim_not_1'),
            Sample((R(rng, 3, 1, 4, 1), -1), desc='neg_dim'),
            Sample((R(rng, 1, 3, 1), (0, 2)), desc='tuple'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng, 1, 0),), desc='empty'),
            Sample((nc(R(rng, 3, 1), TR), 0), desc='noncontig')]


def squeeze_errors(rng):
    return [ErrorSample((R(rng, 2, 1), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 1, 2, 1), (0, 0)), desc='repeated_dims')]


def unsqueeze_samples(rng):
    return [Sample((R(rng, 3, 4), 0), desc='front'),
            Sample((R(rng, 3, 4), 2), desc='back'),
            Sample((R(rng, 3, 4), -1), desc='neg'),
            Sample((R(rng, 3, 4), -3), desc='neg_front'),
            Sample((R(rng), 0), desc='0dim'),
            Sample((R(rng, 0), 1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64(rng, 2), 0), desc='int64')]


def unsqueeze_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 3), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -4), exc=IndexError, desc='neg_out_of_range')]


def expand_samples(rng):
    return [Sample((R(rng, 3, 1), (3, 4)), desc='expand_dim'),
            Sample((R(rng, 1, 3), 2, 2, 3), desc='varargs_new_dims'),
            Sample((R(rng, 3, 1), (2, -1, 2)), desc='minus_one'),
            Sample((R(rng), (2, 3)), desc='0dim'),
            Sample((R(rng, 1, 0), (3, 0)), desc='empty'),
            Sample((nc(R(rng, 1, 3), TR), (3, 4)), desc='noncontig'),
            Sample((I64(rng, 1, 2), (2, 2)), desc='int64')]


def expand_errors(rng):
    return [ErrorSample((R(rng, 3, 2), (3, 4)), desc='non_singleton'),
            ErrorSample((R(rng, 3, 2), (2,)), desc='too_few_sizes'),
            ErrorSample((R(rng, 3), (-1, 3)), desc='minus_one_leading')]


def expand_as_samples(rng):
    return [Sample((R(rng, 3, 1), R(rng, 3, 4)), desc='2d'),
            Sample((R(rng), R(rng, 2, 3)), desc='0dim'),
            Sample((R(rng, 3), I64(rng, 2, 3)), desc='other_int')]


def broadcast_to_samples(rng):
    return [Sample((R(rng, 3, 1), (3, 4)), desc='2d'),
            Sample((R(rng, 3), (2, 3)), desc='new_dim'),
            Sample((R(rng), ()), desc='0dim'),
            Sample((nc(R(rng, 1, 3), TR), (2, 3, 4)), desc='noncontig')]


OPS = [
    # shapes and views
    OpInfo('reshape', None, reshape_samples, method='reshape', errors=reshape_errors),
    OpInfo('view', lambda lib, x, *shape: x.view(*shape), view_samples, method='view',
           errors=view_errors),
    OpInfo('view_as', lambda lib, x, o: x.view_as(o), view_as_samples),
    OpInfo('flatten', None, flatten_samples, method='flatten', errors=flatten_errors),
    OpInfo('transpose', None, transpose_samples, method='transpose',
           aliases=('swapaxes', 'swapdims'), errors=transpose_errors),
    OpInfo('t', None, t_samples, method='t', errors=t_errors),
    OpInfo('mT', lambda lib, x: x.mT, mT_samples),
    OpInfo('T', lambda lib, x: x.T, bigT_samples),
    OpInfo('permute', None, permute_samples, method='permute', errors=permute_errors),
    OpInfo('squeeze', None, squeeze_samples, method='squeeze', errors=squeeze_errors),
    OpInfo('unsqueeze', None, unsqueeze_samples, method='unsqueeze', errors=unsqueeze_errors),
    OpInfo('expand', lambda lib, x, *sizes: x.expand(*sizes), expand_samples,
           errors=expand_errors),
    OpInfo('expand_as', lambda lib, x, o: x.expand_as(o), expand_as_samples),
    OpInfo('broadcast_to', None, broadcast_to_samples, method='broadcast_to',
           errors=lambda rng: [ErrorSample((R(rng, 3, 2), (3, 4)), desc='non_singleton')]),
]


# -- reordering, joining, splitting, triangles and diagonals ------------------------------

def seq(name):
    """``lib.<name>(tensors, **kw)`` with the tensors given as separate sample args."""
    def fn(lib, *ts, **kw):
        return getattr(lib, name)(ts, **kw)
    return fn


def unflatten_samples(rng):
    return [Sample((R(rng, 3, 4), 1, (2, 2)), desc='2d'),
            Sample((R(rng, 3, 4), -1, (2, -1)), desc='neg_dim_infer'),
            Sample((R(rng, 6), 0, (1, 2, 3)), desc='three'),
            Sample((R(rng, 0, 4), 0, (0, 1)), desc='empty'),
            Sample((nc(R(rng, 3, 4), TR), 1, (3, 1)), desc='noncontig_view'),
            Sample((nc(R(rng, 3, 4), TR), 0, (2, 2)), desc='noncontig_copy',
                   check_grad_fn=False),   # torch: ViewBackward0 of a copy; we: UnsafeView
            Sample((I64(rng, 2, 4), 1, (2, 2)), desc='int64')]


def unflatten_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, (2, 3)), desc='bad_product'),
            ErrorSample((R(rng, 3, 4), 1, ()), desc='empty_sizes'),
            ErrorSample((R(rng, 3, 4), 2, (2, 2)), exc=IndexError, desc='dim_out_of_range')]


def movedim_samples(rng):
    return [Sample((R(rng, 2, 3, 4), 0, 2), desc='int'),
            Sample((R(rng, 2, 3, 4), -1, 0), desc='neg'),
            Sample((R(rng, 2, 3, 4), (0, 1), (2, 0)), desc='tuples'),
            Sample((R(rng, 2, 3), 0, 0), desc='same'),
            Sample((R(rng), 0, 0), desc='0dim'),
            Sample((R(rng, 0, 3), 0, 1), desc='empty'),
            Sample((nc(R(rng, 3, 4), TR), 1, 0), desc='noncontig'),
            Sample((I64(rng, 2, 3), 1, 0), desc='int64')]


def movedim_errors(rng):
    return [ErrorSample((R(rng, 2, 3), (0, 1), (0,)), desc='length_mismatch'),
            ErrorSample((R(rng, 2, 3), (0, 0), (0, 1)), desc='repeated_source'),
            ErrorSample((R(rng, 2, 3), (0, 1), (1, 1)), desc='repeated_destination'),
            ErrorSample((R(rng, 2, 3), 2, 0), exc=IndexError, desc='dim_out_of_range')]


def repeat_samples(rng):
    return [Sample((R(rng, 2, 3), 2, 1), desc='2d'),
            Sample((R(rng, 2, 3), 2, 1, 3), desc='new_dim'),
            Sample((R(rng, 2, 3), (1, 2)), desc='tuple'),
            Sample((R(rng, 3), 2, 0), desc='zero_repeat'),
            Sample((R(rng), 3), desc='0dim'),
            Sample((R(rng, 0, 2), 2, 2), desc='empty'),
            Sample((nc(R(rng, 3, 2), TR), 2, 2), desc='noncontig'),
            Sample((I64(rng, 2), 3), desc='int64'),
            Sample((B(rng, 2), 2), desc='bool')]


def repeat_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), desc='too_few'),
            ErrorSample((R(rng, 2, 3), 2, -1), desc='negative'),
            ErrorSample((R(rng, 2, 3),), exc=TypeError, desc='no_repeats')]


def tile_samples(rng):
    return [Sample((R(rng, 2, 3), (2,)), desc='pad_reps'),
            Sample((R(rng, 2, 3), (2, 1, 2)), desc='new_dim'),
            Sample((R(rng, 2, 3), ()), desc='empty_reps'),
            Sample((R(rng), (2,)), desc='0dim'),
            Sample((nc(R(rng, 3, 2), STEP), (1, 2)), desc='noncontig'),
            Sample((I64(rng, 2), (2,)), desc='int64')]


def repeat_interleave_samples(rng):
    return [Sample((R(rng, 3, 4), 2), dict(dim=0), desc='int_dim0'),
            Sample((R(rng, 3, 4), 3), dict(dim=-1), desc='int_neg_dim'),
            Sample((R(rng, 2, 3), 2), desc='int_flat'),
            Sample((R(rng, 3, 4), 0), dict(dim=1), desc='zero'),
            Sample((R(rng, 3, 4), np.array([1, 2, 0])), dict(dim=0), desc='tensor_repeats'),
            Sample((R(rng, 2, 3), np.array([2, 0, 1])), dict(dim=1), desc='tensor_dim1'),
            Sample((R(rng, 2, 3), np.array(2)), dict(dim=0), desc='tensor_0dim'),
            Sample((R(rng, 2, 2), np.array([1, 1, 2, 0])), desc='tensor_flat'),
            Sample((R(rng), 2), desc='0dim'),
            Sample((R(rng, 0, 2), 2), dict(dim=0), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 2), dict(dim=1), desc='noncontig'),
            Sample((I64(rng, 3), 2), desc='int64')]


def repeat_interleave_errors(rng):
    return [ErrorSample((R(rng, 3, 4), np.array([1, 2])), dict(dim=0), desc='repeats_size'),
            ErrorSample((R(rng, 3, 4), np.array([1, -1, 2])), dict(dim=0),
                        desc='negative_tensor'),
            ErrorSample((R(rng, 3, 4), -1), dict(dim=0), desc='negative_int'),
            ErrorSample((R(rng, 3, 4), 2), dict(dim=2), exc=IndexError, desc='dim_out_of_range')]


def flip_samples(rng):
    return [Sample((R(rng, 3, 4), (0,)), desc='dim0'),
            Sample((R(rng, 2, 3, 2), (0, -1)), desc='two_dims'),
            Sample((R(rng, 3, 4), 1), desc='int', method_only=True),
            Sample((R(rng, 3, 4), ()), desc='no_dims'),
            Sample((R(rng), ()), desc='0dim'),
            Sample((R(rng, 0, 3), (0, 1)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (1,)), desc='noncontig'),
            Sample((I64(rng, 3), (0,)), desc='int64'),
            Sample((B(rng, 3), (0,)), desc='bool')]


def flip_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (0, 0)), desc='repeated_dim'),
            ErrorSample((R(rng, 3, 4), (2,)), exc=IndexError, desc='dim_out_of_range')]


def fliplr_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 2),), desc='int64')]


def flipud_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 3),), desc='1d'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def roll_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 0), desc='int'),
            Sample((R(rng, 3, 4), -5, 1), desc='neg_wrap'),
            Sample((R(rng, 3, 4), 2), desc='flat'),
            Sample((R(rng, 2, 3, 2), (1, -1), (0, 2)), desc='tuples'),
            Sample((R(rng, 3, 4), (1, 2), (1, 1)), desc='same_dim_twice'),
            Sample((R(rng), 1), desc='0dim'),
            Sample((R(rng, 0, 3), 1, 1), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1, 0), desc='noncontig'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig_flat'),
            Sample((I64(rng, 5), 2, 0), desc='int64')]


def roll_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (1, 2), 0), desc='misaligned'),
            ErrorSample((R(rng, 3, 4), (1, 2)), desc='flat_two_shifts'),
            ErrorSample((R(rng, 3, 4), 1, 2), exc=IndexError, desc='dim_out_of_range')]


def rot90_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='default'),
            Sample((R(rng, 3, 4), 2), desc='k2'),
            Sample((R(rng, 3, 4), -1), desc='k_neg'),
            Sample((R(rng, 3, 4), 4), desc='k4'),
            Sample((R(rng, 2, 3, 4), 1, (2, 0)), desc='dims'),
            Sample((R(rng, 2, 3, 4), 3, (-1, -2)), desc='neg_dims'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64')]


def rot90_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, (0,)), desc='one_dim'),
            ErrorSample((R(rng, 3, 4), 1, (0, 0)), desc='same_dims'),
            ErrorSample((R(rng, 4),), desc='1d'),
            ErrorSample((R(rng, 3, 4), 1, (0, 2)), exc=IndexError, desc='dim_out_of_range')]


def cat_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 1, 3)), desc='dim0'),
            Sample((R(rng, 2, 3), R(rng, 2, 1), R(rng, 2, 2)), dict(dim=1), desc='three_dim1'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(dim=-1), desc='neg_dim'),
            Sample((R(rng, 2, 3),), desc='single'),
            Sample((R(rng, 2, 3), R(rng, 0, 3)), desc='empty_part'),
            Sample((R(rng, 0), R(rng, 2, 3)), dict(dim=1), desc='skip_1d_empty'),
            Sample((R(rng, 0), R(rng, 0)), desc='all_empty'),
            Sample((R(rng, 0), R(rng, 0)), dict(dim=5), desc='all_empty_any_dim'),
            Sample((R(rng, 3), R(rng, 2)), desc='1d'),
            Sample((nc(R(rng, 3, 2), TR), R(rng, 1, 3)), desc='noncontig'),
            Sample((R(rng, 2, 3), I64(rng, 1, 3)), desc='f32_i64'),
            Sample((I64(rng, 1, 3), R(rng, 2, 3)), desc='i64_f32'),
            Sample((R(rng, 2, 3), F64(rng, 1, 3)), desc='f32_f64'),
            Sample((I64(rng, 2), B(rng, 2)), desc='i64_bool'),
            Sample((I32(rng, 2), I64(rng, 3)), desc='i32_i64')]


def cat_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 2, 4)), desc='size_mismatch'),
            ErrorSample((R(rng, 2, 3), R(rng, 3)), desc='ndim_mismatch'),
            ErrorSample((R(rng, 2, 3), R(rng, 2, 3)), dict(dim=2), exc=IndexError,
                        desc='dim_out_of_range'),
            ErrorSample((R(rng), R(rng)), desc='0dim'),
            ErrorSample((), exc=ValueError, desc='empty_list')]


def stack_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 2, 3)), desc='dim0'),
            Sample((R(rng, 2, 3), R(rng, 2, 3), R(rng, 2, 3)), dict(dim=2), desc='last'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(dim=-2), desc='neg_dim'),
            Sample((R(rng), R(rng)), desc='0dim'),
            Sample((R(rng, 0, 2), R(rng, 0, 2)), dict(dim=1), desc='empty'),
            Sample((nc(R(rng, 3, 2), TR), R(rng, 2, 3)), desc='noncontig'),
            Sample((R(rng, 2), F64(rng, 2)), desc='f32_f64'),
            Sample((I64(rng, 2), R(rng, 2)), desc='i64_f32'),
            Sample((R(rng), F64(rng)), desc='0dim_f32_f64'),
            Sample((B(rng, 2), I32(rng, 2)), desc='bool_i32')]


def stack_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 3)), desc='shape_mismatch'),
            ErrorSample((R(rng, 2, 3), R(rng, 2, 3)), dict(dim=3), exc=IndexError,
                        desc='dim_out_of_range'),
            ErrorSample((), desc='empty_list')]


def hstack_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 2, 1)), desc='2d'),
            Sample((R(rng, 3), R(rng, 2)), desc='1d'),
            Sample((R(rng), R(rng)), desc='0dim'),
            Sample((R(rng, 2, 1, 2), R(rng, 2, 2, 2)), desc='3d'),
            Sample((I64(rng, 2), R(rng, 2)), desc='i64_f32')]


def vstack_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 1, 3)), desc='2d'),
            Sample((R(rng, 3), R(rng, 3)), desc='1d'),
            Sample((R(rng), R(rng)), desc='0dim'),
            Sample((R(rng, 3), R(rng, 2, 3)), desc='mixed'),
            Sample((nc(R(rng, 3, 2), TR), R(rng, 3)), desc='noncontig')]


def dstack_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 2, 3)), desc='2d'),
            Sample((R(rng, 3), R(rng, 3)), desc='1d'),
            Sample((R(rng), R(rng)), desc='0dim'),
            Sample((R(rng, 2, 3, 1), R(rng, 2, 3)), desc='mixed')]


def column_stack_samples(rng):
    return [Sample((R(rng, 3), R(rng, 3)), desc='1d'),
            Sample((R(rng, 3, 2), R(rng, 3)), desc='mixed'),
            Sample((R(rng), R(rng)), desc='0dim'),
            Sample((nc(R(rng, 2, 3), TR), R(rng, 3)), desc='noncontig')]


def join_errors(rng):
    return [ErrorSample((), desc='empty_list')]


def split_samples(rng):
    return [Sample((R(rng, 5, 2), 2), desc='int'),
            Sample((R(rng, 4, 3), 2), desc='int_even'),
            Sample((R(rng, 2, 5), [1, 3, 1]), dict(dim=1), desc='sizes'),
            Sample((R(rng, 2, 5), [2, 0, 3]), dict(dim=-1), desc='sizes_with_zero'),
            Sample((R(rng, 3, 2), 5), desc='larger_than_dim'),
            Sample((R(rng, 0, 2), 2), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 2), dict(dim=1), desc='noncontig'),
            Sample((I64(rng, 4), 3), desc='int64')]


def split_errors(rng):
    return [ErrorSample((R(rng, 3, 2), [1, 1]), desc='sizes_sum'),
            ErrorSample((R(rng, 3, 2), 0), desc='zero_size'),
            ErrorSample((R(rng, 3, 2), -1), desc='negative_size'),
            ErrorSample((R(rng), 1), desc='0dim'),
            ErrorSample((R(rng, 3, 2), 2), dict(dim=2), exc=IndexError, desc='dim_out_of_range')]


def chunk_samples(rng):
    return [Sample((R(rng, 5, 2), 2), desc='uneven'),
            Sample((R(rng, 4, 3), 2), desc='even'),
            Sample((R(rng, 3, 4), 3), dict(dim=1), desc='dim1'),
            Sample((R(rng, 3, 2), 5), desc='more_chunks_than_size'),
            Sample((R(rng, 0, 2), 2), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 2), dict(dim=-1), desc='noncontig'),
            Sample((I64(rng, 4), 2), desc='int64')]


def chunk_errors(rng):
    return [ErrorSample((R(rng, 3, 2), 0), desc='zero_chunks'),
            ErrorSample((R(rng, 3, 2), 2, 2), exc=IndexError, desc='dim_out_of_range')]


def unbind_samples(rng):
    return [Sample((R(rng, 3, 2),), desc='dim0'),
            Sample((R(rng, 2, 3, 2), 1), desc='dim1'),
            Sample((R(rng, 2, 3), -1), desc='neg'),
            Sample((R(rng, 0, 2), 1), desc='empty_rows'),
            Sample((nc(R(rng, 3, 2), TR),), desc='noncontig'),
            Sample((I64(rng, 2, 2),), desc='int64')]


def unbind_errors(rng):
    return [ErrorSample((R(rng),), exc=IndexError, desc='0dim'),
            ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range')]


def narrow_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 1, 2), desc='dim1'),
            Sample((R(rng, 3, 4), 0, -2, 2), desc='neg_start'),
            Sample((R(rng, 3, 4), -1, 0, 4), desc='whole'),
            Sample((R(rng, 3, 4), 1, 4, 0), desc='empty_at_end'),
            Sample((R(rng, 3, 4), 1, np.array(1), 2), desc='tensor_start'),
            Sample((nc(R(rng, 4, 3), TR), 1, 1, 2), desc='noncontig'),
            Sample((I64(rng, 5), 0, 1, 3), desc='int64')]


def narrow_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, 3, 2), desc='too_long'),
            ErrorSample((R(rng, 3, 4), 1, 0, -1), desc='negative_length'),
            ErrorSample((R(rng, 3, 4), 1, 5, 0), exc=IndexError, desc='start_out_of_range'),
            ErrorSample((R(rng, 3, 4), 2, 0, 1), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng), 0, 0, 1), desc='0dim')]


def tensor_split_samples(rng):
    return [Sample((R(rng, 5, 2), 2), desc='sections'),
            Sample((R(rng, 3, 2), 5), desc='more_sections'),
            Sample((R(rng, 2, 5), [1, 3]), dict(dim=1), desc='indices'),
            Sample((R(rng, 4, 2), [3, 1, -1]), desc='indices_unsorted_neg'),
            Sample((R(rng, 4), np.array([1, 2])), desc='tensor_indices'),
            Sample((R(rng, 4), np.array(3)), desc='tensor_sections'),
            Sample((nc(R(rng, 4, 3), TR), 2), dict(dim=1), desc='noncontig')]


def tensor_split_errors(rng):
    return [ErrorSample((R(rng, 3, 2), 0), desc='zero_sections'),
            ErrorSample((R(rng), 2), desc='0dim'),
            ErrorSample((R(rng, 3, 2), 2, 2), exc=IndexError, desc='dim_out_of_range')]


def tri_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 3, 4), 1), desc='diag1'),
            Sample((R(rng, 4, 3), -2), desc='diag_neg'),
            Sample((R(rng, 2, 3, 3),), desc='batched'),
            Sample((R(rng, 3, 4), 9), desc='diag_far'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((F64(rng, 3, 3),), desc='f64'),
            Sample((I64(rng, 3, 3),), desc='int64'),
            Sample((B(rng, 2, 3),), desc='bool')]


def tri_errors(rng):
    return [ErrorSample((R(rng, 3),), desc='1d'),
            ErrorSample((R(rng, 3),), desc='1d_inplace', variant='inplace')]


def diagonal_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 3, 4), 1), desc='offset'),
            Sample((R(rng, 3, 4), -2), desc='neg_offset'),
            Sample((R(rng, 3, 4), 7), desc='offset_far'),
            Sample((R(rng, 2, 3, 4), 0, 2, 0), desc='dims_3d'),
            Sample((R(rng, 2, 3, 4), 1, -1, -2), desc='neg_dims'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64(rng, 3, 3),), desc='int64')]


def diagonal_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 0, 0, 0), desc='same_dims'),
            ErrorSample((R(rng, 3, 4), 0, 0, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 4),), exc=IndexError, desc='1d')]


def diag_embed_samples(rng):
    return [Sample((R(rng, 3),), desc='1d'),
            Sample((R(rng, 2, 3),), desc='batched'),
            Sample((R(rng, 2, 3), 1, 0, 2), desc='offset_dims'),
            Sample((R(rng, 2, 3), -1, -1, 0), desc='neg'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 3, 2), TR),), desc='noncontig'),
            Sample((I64(rng, 3),), desc='int64')]


def diag_embed_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 0, 0, 0), desc='same_dims'),
            ErrorSample((R(rng, 2, 3), 0, 0, 3), exc=IndexError, desc='dim_out_of_range')]


def diag_samples(rng):
    return [Sample((R(rng, 4),), desc='1d'),
            Sample((R(rng, 3), 1), desc='1d_offset'),
            Sample((R(rng, 3), -2), desc='1d_neg_offset'),
            Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 3, 4), -1), desc='2d_offset'),
            Sample((R(rng, 3, 4), 5), desc='2d_offset_far'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 3),), desc='int64')]


def diag_errors(rng):
    return [ErrorSample((R(rng),), desc='0dim'),
            ErrorSample((R(rng, 2, 2, 2),), desc='3d')]


def trace_samples(rng):
    return [Sample((R(rng, 3, 3),), desc='square'),
            Sample((R(rng, 2, 4),), desc='wide'),
            Sample((R(rng, 4, 2),), desc='tall'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((F64(rng, 2, 2),), desc='f64'),
            Sample((I64(rng, 3, 3),), desc='int64'),
            Sample((I32(rng, 3, 3),), desc='int32')]


def trace_errors(rng):
    return [ErrorSample((R(rng, 3),), desc='1d'),
            ErrorSample((B(rng, 2, 2),), exc=NotImplementedError, desc='bool')]


def meshgrid_samples(rng):
    return [Sample((R(rng, 3), R(rng, 2)), dict(indexing='ij'), desc='ij'),
            Sample((R(rng, 3), R(rng, 2)), dict(indexing='xy'), desc='xy'),
            Sample((R(rng, 2), R(rng, 3), R(rng, 2)), dict(indexing='xy'), desc='xy_three'),
            Sample((R(rng, 3),), dict(indexing='xy'), desc='single'),
            Sample((R(rng), R(rng, 2)), dict(indexing='ij'), desc='0dim'),
            Sample((R(rng, 0), R(rng, 2)), dict(indexing='ij'), desc='empty'),
            Sample((nc(R(rng, 6), STEP), R(rng, 2)), dict(indexing='ij'), desc='noncontig'),
            Sample((I64(rng, 2), I64(rng, 3)), dict(indexing='ij'), desc='int64')]


def meshgrid_errors(rng):
    return [ErrorSample((R(rng, 2, 2), R(rng, 2)), dict(indexing='ij'), desc='2d_input'),
            ErrorSample((R(rng, 2), F64(rng, 2)), dict(indexing='ij'), desc='dtype_mismatch'),
            ErrorSample((R(rng, 2),), dict(indexing='foo'), desc='bad_indexing'),
            ErrorSample((), dict(indexing='ij'), desc='no_tensors')]


def atleast_samples(rng):
    return [Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 3),), desc='1d'),
            Sample((R(rng, 2, 3),), desc='2d'),
            Sample((R(rng, 2, 1, 2),), desc='3d'),
            Sample((R(rng), R(rng, 2), R(rng, 2, 2)), desc='several'),
            Sample((nc(R(rng, 3, 2), TR),), desc='noncontig'),
            Sample((I64(rng, 2),), desc='int64')]


def meshgrid_fn(lib, *ts, **kw):
    return lib.meshgrid(*ts, **kw)


OPS += [
    OpInfo('unflatten', None, unflatten_samples, method='unflatten', errors=unflatten_errors),
    OpInfo('movedim', None, movedim_samples, method='movedim', aliases=('moveaxis',),
           errors=movedim_errors),
    OpInfo('repeat', lambda lib, x, *r: x.repeat(*r), repeat_samples, errors=repeat_errors),
    OpInfo('tile', None, tile_samples, method='tile'),
    OpInfo('repeat_interleave', None, repeat_interleave_samples, method='repeat_interleave',
           errors=repeat_interleave_errors),
    OpInfo('flip', None, flip_samples, method='flip', errors=flip_errors),
    OpInfo('fliplr', None, fliplr_samples, method='fliplr',
           errors=lambda rng: [ErrorSample((R(rng, 3),), desc='1d')]),
    OpInfo('flipud', None, flipud_samples, method='flipud',
           errors=lambda rng: [ErrorSample((R(rng),), desc='0dim')]),
    OpInfo('roll', None, roll_samples, method='roll', errors=roll_errors),
    OpInfo('rot90', None, rot90_samples, method='rot90', errors=rot90_errors),
    OpInfo('cat', seq('cat'), cat_samples, aliases=(), errors=cat_errors),
    OpInfo('concat', seq('concat'), cat_samples),
    OpInfo('concatenate', seq('concatenate'), cat_samples),
    OpInfo('stack', seq('stack'), stack_samples, errors=stack_errors),
    OpInfo('hstack', seq('hstack'), hstack_samples, errors=join_errors),
    OpInfo('vstack', seq('vstack'), vstack_samples, errors=join_errors),
    OpInfo('dstack', seq('dstack'), dstack_samples, errors=join_errors),
    OpInfo('column_stack', seq('column_stack'), column_stack_samples, errors=join_errors),
    OpInfo('split', None, split_samples, method='split', errors=split_errors),
    OpInfo('chunk', None, chunk_samples, method='chunk', errors=chunk_errors),
    OpInfo('unbind', None, unbind_samples, method='unbind', errors=unbind_errors),
    OpInfo('narrow', None, narrow_samples, method='narrow', errors=narrow_errors),
    OpInfo('tensor_split', None, tensor_split_samples, method='tensor_split',
           errors=tensor_split_errors),
    OpInfo('tril', None, tri_samples, method='tril', inplace='tril_', errors=tri_errors),
    OpInfo('triu', None, tri_samples, method='triu', inplace='triu_', errors=tri_errors),
    OpInfo('diagonal', None, diagonal_samples, method='diagonal', errors=diagonal_errors),
    OpInfo('diag_embed', None, diag_embed_samples, method='diag_embed',
           errors=diag_embed_errors),
    OpInfo('diag', None, diag_samples, method='diag', errors=diag_errors),
    OpInfo('trace', None, trace_samples, method='trace', errors=trace_errors),
    OpInfo('meshgrid', meshgrid_fn, meshgrid_samples, errors=meshgrid_errors),
    OpInfo('atleast_1d', None, atleast_samples),
    OpInfo('atleast_2d', None, atleast_samples),
    OpInfo('atleast_3d', None, atleast_samples),
]


# -- issue 16: more views, in-place views, scatter-into and copy forms -------------------------

def H_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 0, 2),), desc='empty'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig'),
            Sample((I64(rng, 2, 3),), desc='int64')]


def H_errors(rng):
    return [ErrorSample((R(rng, 3),), desc='1d'),
            ErrorSample((R(rng, 2, 3, 4),), desc='3d')]


def mH_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(R(rng, 4, 3), STEP),), desc='noncontig')]


def mH_errors(rng):
    return [ErrorSample((R(rng, 3),), desc='1d')]


def ravel_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig',
                   check_grad_fn=False),  # torch: ViewBackward0 of a copy; we: UnsafeView
            Sample((I64(rng, 2, 3),), desc='int64')]


def unfold_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 2, 1), desc='overlapping'),
            Sample((R(rng, 5, 2), 0, 2, 2), desc='step2'),
            Sample((R(rng, 5, 2), 0, 2, 3), desc='step_gaps'),
            Sample((R(rng, 2, 3, 4), -1, 3, 1), desc='neg_dim'),
            Sample((R(rng, 3, 4), 1, 0, 1), desc='size0'),
            Sample((R(rng), 0, 1, 1), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR), 1, 2, 1), desc='noncontig'),
            Sample((I64(rng, 6), 0, 3, 2), desc='int64')]


def unfold_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 1, 5, 1), desc='size_too_big', variant='method'),
            ErrorSample((R(rng, 3, 4), 1, 2, 0), desc='step_zero', variant='method'),
            ErrorSample((R(rng, 3, 4), 2, 2, 1), exc=IndexError, desc='dim_out_of_range',
                        variant='method')]


def as_strided_samples(rng):
    return [Sample((R(rng, 3, 4), (2, 2), (1, 2)), desc='2d'),
            Sample((R(rng, 3, 4), (2, 3), (4, 1), 1), desc='offset'),
            Sample((R(rng, 3, 4), (3, 3), (1, 1)), desc='overlapping_windows'),
            Sample((R(rng, 3, 4), (2, 2), (0, 1)), desc='stride0'),
            Sample((R(rng, 3, 4), (), (), 5), desc='0dim_result'),
            Sample((R(rng, 3, 4), (0, 2), (1, 1)), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), (2, 2), (3, 1)), desc='noncontig'),
            # reads storage the strided input does not cover: a dependence through memory
            # that neither library's autograd sees, so finite differences disagree with both
            Sample((nc(R(rng, 3, 4), STEP), (2, 2), (1, 4), 2), desc='noncontig_offset',
                   gradcheck=False),
            Sample((I64(rng, 3, 4), (2, 2), (1, 2)), desc='int64')]


def as_strided_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (2, 2), (1, 2), 20), desc='out_of_bounds'),
            ErrorSample((R(rng, 3, 4), (2,), (-1,), 3), desc='negative_stride'),
            ErrorSample((R(rng, 3, 4), (2, 2), (1,)), desc='length_mismatch'),
            ErrorSample((R(rng, 3, 4), (2,), (1,), -1), desc='negative_offset'),
            ErrorSample((R(rng, 3, 4), (2, 2), (1, 2), 20), desc='out_of_bounds_inplace',
                        variant='inplace')]


def sum_to_size_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 4), desc='keep_dim'),
            Sample((R(rng, 3, 4), (4,)), desc='drop_leading'),
            Sample((R(rng, 3, 4), (3, 1)), desc='last'),
            Sample((R(rng, 2, 3, 4), (1, 1)), desc='mixed'),
            Sample((R(rng, 3, 4), (3, 4)), desc='same'),
            Sample((R(rng, 3, 4), ()), desc='to_0dim'),
            Sample((nc(R(rng, 4, 3), TR), (1, 4)), desc='noncontig'),
            Sample((I64(rng, 2, 3), (1, 3)), desc='int64')]


def sum_to_size_errors(rng):
    return [ErrorSample((R(rng, 3, 4), (2, 4)), desc='not_expandable', variant='method'),
            ErrorSample((R(rng, 3, 4), (1, 3, 4)), desc='more_dims', variant='method')]


def broadcast_tensors_samples(rng):
    return [Sample((R(rng, 3, 1), R(rng, 4)), desc='two'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='same'),
            Sample((R(rng), R(rng, 2, 1), R(rng, 1, 3)), desc='three'),
            Sample((R(rng, 0, 1), R(rng, 2)), desc='empty'),
            Sample((nc(R(rng, 1, 3), TR), R(rng, 2, 1, 1)), desc='noncontig'),
            Sample((I64(rng, 2, 1), R(rng, 3)), desc='mixed_dtypes')]


def broadcast_tensors_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 5)), desc='mismatch')]


def broadcast_tensors_fn(lib, *ts):
    return lib.broadcast_tensors(*ts)


def hsplit_samples(rng):
    return [Sample((R(rng, 3, 4), 2), desc='sections'),
            Sample((R(rng, 3, 4), [1, 3]), desc='indices'),
            Sample((R(rng, 4), 2), desc='1d'),
            Sample((nc(R(rng, 4, 3), TR), 2), desc='noncontig')]


def hsplit_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 3), desc='not_divisible'),
            ErrorSample((R(rng), 1), desc='0dim')]


def vsplit_samples(rng):
    return [Sample((R(rng, 4, 3), 2), desc='sections'),
            Sample((R(rng, 4, 3), [1, 3]), desc='indices'),
            Sample((nc(R(rng, 3, 4), TR), [2]), desc='noncontig')]


def vsplit_errors(rng):
    return [ErrorSample((R(rng, 3, 4), 2), desc='not_divisible'),
            ErrorSample((R(rng, 4), 2), desc='1d')]


def dsplit_samples(rng):
    return [Sample((R(rng, 2, 3, 4), 2), desc='sections'),
            Sample((R(rng, 2, 3, 4), [1, 2]), desc='indices')]


def dsplit_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 4), 3), desc='not_divisible'),
            ErrorSample((R(rng, 3, 4), 2), desc='2d')]


def unsafe_split_samples(rng):
    return [Sample((R(rng, 5, 2), 2), desc='int'),
            Sample((R(rng, 3, 5), 2, 1), desc='dim1'),
            Sample((nc(R(rng, 4, 3), TR), 2), dict(dim=1), desc='noncontig'),
            Sample((I64(rng, 4), 3), desc='int64')]


def unsafe_split_with_sizes_samples(rng):
    return [Sample((R(rng, 2, 5), [1, 3, 1], 1), desc='sizes'),
            Sample((R(rng, 4, 2), [2, 0, 2]), desc='with_zero'),
            Sample((nc(R(rng, 4, 3), TR), [1, 3]), dict(dim=1), desc='noncontig')]


def diagflat_samples(rng):
    return [Sample((R(rng, 3),), desc='1d'),
            Sample((R(rng, 2, 2),), desc='2d_flattened'),
            Sample((R(rng, 3), 1), desc='offset'),
            Sample((R(rng, 2), -2), desc='neg_offset'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0),), desc='empty'),
            Sample((nc(R(rng, 3, 2), TR),), desc='noncontig'),
            Sample((I64(rng, 3),), desc='int64')]


def diagonal_scatter_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3)), desc='2d'),
            Sample((R(rng, 3, 4), R(rng, 3), 1), desc='offset'),
            Sample((R(rng, 3, 4), R(rng, 2), -1), desc='neg_offset'),
            Sample((R(rng, 2, 3, 4), R(rng, 3, 2), 0, 0, 2), desc='dims_3d'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3)), desc='noncontig'),
            Sample((R(rng, 3, 3), nc(R(rng, 6), STEP)), desc='noncontig_src'),
            Sample((I64(rng, 3, 3), I64(rng, 3)), desc='int64')]


def diagonal_scatter_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 2)), desc='src_size'),
            ErrorSample((R(rng, 3, 4), R(rng, 3), 0, 0, 0), desc='same_dims')]


def select_scatter_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 4), 0, 1), desc='dim0'),
            Sample((R(rng, 3, 4), R(rng, 3), 1, -1), desc='neg_index'),
            Sample((R(rng, 3), R(rng), 0, 2), desc='1d'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 4), 0, 0), desc='noncontig'),
            Sample((I64(rng, 2, 3), I64(rng, 3), 0, 1), desc='int64')]


def select_scatter_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3), 0, 1), desc='src_size'),
            ErrorSample((R(rng, 3, 4), R(rng, 4), 0, 5), exc=IndexError, desc='index_range')]


def slice_scatter_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 1, 4)), dict(start=1, end=2), desc='rows'),
            Sample((R(rng, 3, 4), R(rng, 3, 2), 1, 0, 4, 2), desc='step'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='all'),
            Sample((R(rng, 3, 4), R(rng, 2, 4)), dict(start=-2), desc='neg_start'),
            Sample((R(rng, 3, 4), R(rng, 3, 2)), dict(dim=1, start=1, end=10, step=2),
                   desc='end_past'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 2)), dict(dim=1, end=2),
                   desc='noncontig'),
            Sample((I64(rng, 3, 4), I64(rng, 1, 4)), dict(start=2), desc='int64')]


def slice_scatter_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 2, 4)), desc='src_size'),
            ErrorSample((R(rng, 3, 4), R(rng, 3, 2)), dict(dim=1, step=0), desc='step0')]


def _no_method_only(gen):
    return lambda rng: [s for s in gen(rng) if not s.method_only]


def split_copy_samples(rng):
    return [s for s in split_samples(rng) if not isinstance(s.args[1], list)]


def view_copy_samples(rng):
    return [s for s in reshape_samples(rng) if not s.method_only]


def expand_copy_samples(rng):
    return [Sample((R(rng, 3, 1), (3, 4)), desc='expand_dim'),
            Sample((R(rng, 3, 1), (2, -1, 2)), desc='minus_one'),
            Sample((R(rng), (2, 3)), desc='0dim'),
            Sample((nc(R(rng, 1, 3), TR), (3, 4)), desc='noncontig'),
            Sample((I64(rng, 1, 2), (2, 2)), desc='int64')]


def slice_copy_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 1, 3), desc='dim1'),
            Sample((R(rng, 3, 4),), desc='default'),
            Sample((R(rng, 5, 2), 0, 0, 5, 2), desc='step'),
            Sample((nc(R(rng, 4, 3), TR), 0, 1), desc='noncontig')]


def select_copy_samples(rng):
    return [Sample((R(rng, 3, 4), 1, 2), desc='dim1'),
            Sample((R(rng, 3, 4), 0, -1), desc='neg'),
            Sample((nc(R(rng, 4, 3), TR), 0, 1), desc='noncontig')]


def t_copy_samples(rng):
    return [s for s in t_samples(rng) if s.desc != '0dim']


def alias_copy_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng),), desc='0dim'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((I64(rng, 2),), desc='int64')]


def narrow_copy_samples(rng):
    samples = [s for s in narrow_samples(rng) if s.desc != 'tensor_start']
    for s in samples:
        if s.desc == 'neg_start':
            s.requires_grad = False     # torch 2.13's NarrowCopyBackward0 fails on it
    return samples


OPS += [
    OpInfo('Tensor.H', lambda lib, x: x.H, H_samples, errors=H_errors),
    OpInfo('Tensor.mH', lambda lib, x: x.mH, mH_samples, errors=mH_errors),
    OpInfo('adjoint', None, mH_samples, method='adjoint', errors=mH_errors),
    OpInfo('ravel', None, ravel_samples, method='ravel'),
    OpInfo('Tensor.unfold', lambda lib, x, *a: x.unfold(*a), unfold_samples,
           errors=unfold_errors),
    OpInfo('as_strided', None, as_strided_samples, method='as_strided',
           inplace='as_strided_', errors=as_strided_errors),
    OpInfo('sum_to_size', lambda lib, x, *s: x.sum_to_size(*s), sum_to_size_samples,
           errors=sum_to_size_errors),
    OpInfo('broadcast_tensors', broadcast_tensors_fn, broadcast_tensors_samples,
           errors=broadcast_tensors_errors),
    OpInfo('hsplit', None, hsplit_samples, method='hsplit', errors=hsplit_errors),
    OpInfo('vsplit', None, vsplit_samples, method='vsplit', errors=vsplit_errors),
    OpInfo('dsplit', None, dsplit_samples, method='dsplit', errors=dsplit_errors),
    OpInfo('unsafe_split', None, unsafe_split_samples, method='unsafe_split'),
    OpInfo('unsafe_chunk', None, chunk_samples, method='unsafe_chunk'),
    OpInfo('unsafe_split_with_sizes', None, unsafe_split_with_sizes_samples,
           method='unsafe_split_with_sizes'),
    OpInfo('diagflat', None, diagflat_samples, method='diagflat'),
    OpInfo('diagonal_scatter', None, diagonal_scatter_samples, method='diagonal_scatter',
           errors=diagonal_scatter_errors),
    OpInfo('select_scatter', None, select_scatter_samples, method='select_scatter',
           errors=select_scatter_errors),
    OpInfo('slice_scatter', None, slice_scatter_samples, method='slice_scatter',
           errors=slice_scatter_errors),
    # the *_copy forms: the view op, then a copy (PyTorch names the node <view node>_copy)
    OpInfo('alias_copy', None, alias_copy_samples),
    OpInfo('as_strided_copy', None, as_strided_samples),
    OpInfo('diagonal_copy', None, diagonal_samples),
    OpInfo('expand_copy', None, expand_copy_samples),
    OpInfo('narrow_copy', None, narrow_copy_samples, method='narrow_copy'),
    OpInfo('permute_copy', None, _no_method_only(permute_samples)),
    OpInfo('select_copy', None, select_copy_samples),
    OpInfo('slice_copy', None, slice_copy_samples),
    OpInfo('split_copy', None, split_copy_samples),
    OpInfo('split_with_sizes_copy', None, lambda rng: [
        s for s in split_samples(rng) if isinstance(s.args[1], list)]),
    OpInfo('squeeze_copy', None, squeeze_samples),
    OpInfo('t_copy', None, t_copy_samples),
    OpInfo('transpose_copy', None, transpose_samples),
    OpInfo('unbind_copy', None, unbind_samples),
    OpInfo('unfold_copy', None, lambda rng: [s for s in unfold_samples(rng)
                                             if s.desc != '0dim']),
    OpInfo('unsqueeze_copy', None, unsqueeze_samples),
    OpInfo('view_copy', None, view_copy_samples),
]

# In-place view ops: the tensor itself becomes the view (its history and version change).
for _row, _inplace in (('squeeze', 'squeeze_'), ('unsqueeze', 'unsqueeze_'),
                       ('transpose', 'transpose_'), ('t', 't_')):
    [r for r in OPS if r.name == _row][0].inplace = _inplace
