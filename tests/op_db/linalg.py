"""Rows for linear algebra."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


def matmul_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 4, 2)), desc='mm'),
            Sample((R(rng, 4), R(rng, 4)), desc='dot'),
            Sample((R(rng, 3, 4), R(rng, 4)), desc='mv'),
            Sample((R(rng, 3), R(rng, 3, 2)), desc='vm', check_grad_fn=False),
            Sample((R(rng, 2, 2, 3), R(rng, 3, 2)), desc='batched_2d', check_grad_fn=False),
            Sample((R(rng, 2, 3, 2), R(rng, 2, 2, 2)), desc='bmm', check_grad_fn=False),
            Sample((R(rng, 2, 1, 2, 3), R(rng, 3, 3, 2)), desc='broadcast_batch',
                   check_grad_fn=False),
            Sample((R(rng, 3), R(rng, 2, 3, 2)), desc='vec_batched', check_grad_fn=False),
            Sample((R(rng, 2, 3, 2), R(rng, 2)), desc='batched_vec', check_grad_fn=False),
            Sample((nc(R(rng, 4, 3), TR), nc(R(rng, 2, 4), TR)), desc='noncontig'),
            Sample((R(rng, 0, 3), R(rng, 3, 2)), desc='empty_rows'),
            Sample((R(rng, 2, 0), R(rng, 0, 3)), desc='empty_inner'),
            Sample((F64(rng, 2, 3), F64(rng, 3, 2)), desc='f64'),
            Sample((I64(rng, 2, 3), I64(rng, 3, 2)), desc='int64')]


def matmul_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 4, 2)), desc='inner_mismatch'),
            ErrorSample((R(rng, 3), R(rng, 4)), desc='dot_mismatch'),
            ErrorSample((R(rng, 2, 2, 3), R(rng, 2, 2, 3)), desc='batched_mismatch'),
            ErrorSample((R(rng), R(rng, 3)), desc='0dim'),
            ErrorSample((R(rng, 2, 3), F64(rng, 3, 2)), desc='dtype_mismatch')]


def mm_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 4, 2)), desc='mm'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 4, 2)), desc='noncontig'),
            Sample((R(rng, 0, 2), R(rng, 2, 3)), desc='empty'),
            Sample((F64(rng, 1, 3), F64(rng, 3, 1)), desc='f64'),
            Sample((I64(rng, 2, 3), I64(rng, 3, 2)), desc='int64')]


def mm_errors(rng):
    return matmul_errors(rng)[:1] + [
        ErrorSample((R(rng, 3), R(rng, 3, 2)), desc='vector'),
        ErrorSample((R(rng, 2, 3, 2), R(rng, 2, 2)), desc='batched'),
        ErrorSample((R(rng, 2, 3), F64(rng, 3, 2)), desc='dtype_mismatch')]


OPS = [
    # linear algebra
    OpInfo('matmul', None, matmul_samples, method='matmul', operator=lambda a, b: a @ b,
           errors=matmul_errors),
    OpInfo('mm', None, mm_samples, method='mm', errors=mm_errors),
]
