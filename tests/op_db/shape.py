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
    return [ErrorSample((R(rng, 2, 1), 2), exc=IndexError, desc='dim_out_of_range')]


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
