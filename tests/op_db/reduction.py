"""Rows for reductions."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def reduction_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4), 0), desc='dim0'),
            Sample((R(rng, 3, 4), -1), desc='neg_dim'),
            Sample((R(rng, 3, 4),), dict(dim=1, keepdim=True), desc='keepdim'),
            Sample((R(rng, 2, 3, 2), (0, 2)), desc='tuple_dims'),
            Sample((R(rng, 2, 3, 2), (-1, 0)), dict(keepdim=True), desc='tuple_neg_keepdim'),
            Sample((R(rng, 2, 3, 2),), dict(dim=[1]), desc='list_dim'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng), -1), dict(keepdim=True), desc='0dim_neg_keepdim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((R(rng, 0, 3), 1), desc='empty_dim1'),
            Sample((nc(R(rng, 4, 3), TR), 0), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((R(rng, 2, 3),), dict(dtype=DT('float64')), desc='dtype_kw')]


def sum_samples(rng):
    s = reduction_samples(rng)
    s += [Sample((R(rng, 3, 4),), dict(dim=()), desc='empty_dim_tuple'),
          Sample((I64(rng, 3, 4), 1), desc='int64'),
          Sample((I32(rng, 3, 4),), desc='int32_to_int64'),
          Sample((B(rng, 3, 4), 0), desc='bool_to_int64')]
    return s


def reduction_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -3), exc=IndexError, desc='neg_dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), (0, 0)), desc='repeated_dim'),
            ErrorSample((R(rng), 1), exc=IndexError, desc='0dim_out_of_range')]


def mean_errors(rng):
    return reduction_errors(rng) + [ErrorSample((I64(rng, 2, 3),), desc='int_input')]


OPS = [
    # reductions
    OpInfo('sum', None, sum_samples, method='sum', errors=reduction_errors),
    OpInfo('mean', None, reduction_samples, method='mean', errors=mean_errors),
]
