"""Rows for reductions, scans, sorting and selection."""
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


def with_nans(rng, *shape, frac=0.3):
    a = R(rng, *shape)
    a[rng.random(shape) < frac] = np.nan
    return a


def nan_samples(rng):
    s = reduction_samples(rng)
    s += [Sample((with_nans(rng, 3, 4),), desc='nans_all'),
          Sample((with_nans(rng, 3, 4), 1), desc='nans_dim1'),
          Sample((with_nans(rng, 2, 3, 2), (0, 2)), dict(keepdim=True), desc='nans_tuple')]
    return s


def nansum_samples(rng):
    return nan_samples(rng) + [Sample((I64(rng, 3, 4), 1), desc='int64'),
                               Sample((B(rng, 3, 4),), desc='bool_to_int64')]


# -- prod and scans --------------------------------------------------------------------------

def with_zeros(rng, *shape, count=1):
    """An array with ``count`` exact zeros in each row along the last axis."""
    a = R(rng, *shape)
    for k in range(count):
        a[..., (2 * k + 1) % shape[-1]] = 0.0
    return a


def prod_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4), 0), desc='dim0'),
            Sample((R(rng, 3, 4), -1), desc='neg_dim'),
            Sample((R(rng, 3, 4), 1), dict(keepdim=True), desc='keepdim'),
            Sample((R(rng, 2, 3, 2),), dict(dim=1), desc='3d_dim_kw'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng), -1), dict(keepdim=True), desc='0dim_keepdim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((R(rng, 0, 3), 0), desc='empty_reduced_dim'),
            Sample((R(rng, 0, 3), 1), desc='empty_dim1'),
            Sample((nc(R(rng, 4, 3), TR), 0), desc='noncontig_T'),
            Sample((nc(R(rng, 3, 4), STEP), 1), desc='noncontig_step'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((R(rng, 2, 3),), dict(dtype=DT('float64')), desc='dtype_kw'),
            Sample((R(rng, 2, 3), 1), dict(dtype=DT('float64')), desc='dim_dtype_kw'),
            Sample((I64(rng, 3, 4), 1), desc='int64'),
            Sample((I32(rng, 3, 4),), desc='int32_to_int64'),
            Sample((B(rng, 3, 4), 0), desc='bool_to_int64'),
            # exact zeros: the gradient is the product of the others, as in torch
            Sample((with_zeros(rng, 3, 4), 1), desc='one_zero_per_row'),
            Sample((with_zeros(rng, 2, 3, count=2), 1), desc='two_zeros_per_row'),
            Sample((with_zeros(rng, 3, 4), 0), desc='zeros_other_dim'),
            Sample((with_zeros(rng, 2, 3),), desc='all_one_zero'),
            Sample((with_zeros(rng, 2, 3, count=2),), desc='all_two_zeros')]


def prod_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng), 1), exc=IndexError, desc='0dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), (0, 1)), exc=TypeError, desc='tuple_dim'),
            ErrorSample((R(rng, 2, 3), 1.0), exc=TypeError, desc='float_dim')]


def scan_samples(*, zeros=False, ints=True):
    def gen(rng):
        s = [Sample((R(rng, 3, 4), 0), desc='dim0'),
             Sample((R(rng, 3, 4), -1), desc='neg_dim'),
             Sample((R(rng, 2, 3, 2),), dict(dim=1), desc='3d_dim_kw'),
             Sample((R(rng), 0), desc='0dim'),
             Sample((R(rng), -1), desc='0dim_neg'),
             Sample((R(rng, 0, 3), 0), desc='empty_dim0'),
             Sample((R(rng, 0, 3), 1), desc='empty_dim1'),
             Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig_T'),
             Sample((nc(R(rng, 3, 4), STEP), 1), desc='noncontig_step'),
             Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64')]
        if ints:
            s += [Sample((I64(rng, 3, 4), 1), desc='int64'),
                  Sample((I32(rng, 3, 4), 0), desc='int32_to_int64'),
                  Sample((B(rng, 3, 4), 1), desc='bool_to_int64'),
                  Sample((R(rng, 2, 3), 1), dict(dtype=DT('float64')), desc='dtype_kw'),
                  Sample((I64(rng, 2, 3), 0), dict(dtype=DT('float32')), desc='int_dtype_kw')]
        if zeros:
            s += [Sample((with_zeros(rng, 2, 4), 1), desc='one_zero_per_row'),
                  Sample((with_zeros(rng, 1, 5, count=2), 0), desc='zeros_size1_dim'),
                  Sample((with_zeros(rng, 1, 6, count=2), 1), desc='two_zeros_per_row'),
                  Sample((with_zeros(rng, 2, 5, count=2), -1), desc='two_zeros_bigger'),
                  Sample((with_zeros(rng, 4, 3), 0), desc='zeros_dim0'),
                  Sample((np.zeros((2, 3), np.float32), 1), desc='all_zeros')]
        return s
    return gen


def dim_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), -3), exc=IndexError, desc='neg_dim_out_of_range'),
            ErrorSample((R(rng), 1), exc=IndexError, desc='0dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), 1.5), exc=TypeError, desc='float_dim')]


def scan_errors(rng):
    return dim_errors(rng) + [ErrorSample((R(rng, 2, 3),), exc=TypeError, desc='missing_dim')]


def cummax_samples(rng):
    s = scan_samples(ints=False)(rng)
    s += [Sample((I64(rng, 3, 4), 1), desc='int64'),
          Sample((B(rng, 3, 4), 1), desc='bool'),
          # ties: the index moves on to the latest equal element, as in torch
          Sample((np.array([[1., 3., 3., 2., 3.], [2., 2., 2., 1., 4.]], np.float32), 1),
                 desc='ties', gradcheck=False),
          Sample((np.array([1., np.nan, 3., np.nan, 0.], np.float32), 0), desc='nans',
                 gradcheck=False)]
    return s


# -- max, min, amax, amin, argmax, argmin ----------------------------------------------------------

def ties(rng):
    return np.array([[1., 3., 3., -2.], [0.5, 0.5, -1., 0.5], [2., 1., 2., 2.]], np.float32)


def max_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4), 1), desc='dim1'),
            Sample((R(rng, 3, 4), -2), desc='neg_dim'),
            Sample((R(rng, 3, 4), 1, True), desc='keepdim_positional'),
            Sample((R(rng, 2, 3, 2),), dict(dim=1, keepdim=True), desc='keepdim_kw'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng), -1), dict(keepdim=True), desc='0dim_keepdim'),
            Sample((R(rng, 0, 3), 1), desc='empty_nonreduced'),
            Sample((nc(R(rng, 4, 3), TR), 0), desc='noncontig_T'),
            Sample((nc(R(rng, 3, 4), STEP), 1), desc='noncontig_step'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((I64(rng, 3, 4),), desc='int64_all'),
            Sample((I64(rng, 3, 4), 0), desc='int64_dim'),
            Sample((B(rng, 3, 4), 1), desc='bool_dim'),
            # ties: all of max() splits the gradient evenly; max(dim) picks the first index
            Sample((ties(rng),), desc='ties_all', gradcheck=False),
            Sample((ties(rng), 1), desc='ties_dim', gradcheck=False),
            Sample((np.array([[1., np.nan, 2.], [0., 1., -1.]], np.float32), 1), desc='nan_dim',
                   gradcheck=False),
            Sample((np.array([1., np.nan, 2.], np.float32),), desc='nan_all', gradcheck=False)]


def max_errors(rng):
    return dim_errors(rng) + [
        ErrorSample((R(rng, 0, 3),), desc='empty_full_reduction'),
        ErrorSample((R(rng, 0, 3), 0), exc=IndexError, desc='empty_reduced_dim'),
        ErrorSample((R(rng, 2, 3), 1, True, True), exc=TypeError, desc='too_many_args'),
        ErrorSample((R(rng, 2, 3), 1.0), exc=TypeError, desc='float_dim_arg')]


def amax_samples(rng):
    s = [x for x in reduction_samples(rng) if x.desc not in ('dtype_kw', 'empty')]
    s += [Sample((R(rng, 3, 4), ()), desc='empty_tuple_all'),
          Sample((R(rng, 3, 4), []), dict(keepdim=True), desc='empty_list_keepdim'),
          Sample((I64(rng, 3, 4), 1), desc='int64'),
          Sample((B(rng, 3, 4), 0), desc='bool'),
          Sample((ties(rng),), desc='ties_all', gradcheck=False),
          Sample((ties(rng), 1), desc='ties_dim', gradcheck=False),
          Sample((ties(rng), (0, 1)), dict(keepdim=True), desc='ties_tuple_keepdim',
                 gradcheck=False),
          Sample((np.array([[1., np.nan, 2.], [0., 1., -1.]], np.float32), 1), desc='nan',
                 gradcheck=False)]
    return s


def amax_errors(rng):
    return reduction_errors(rng) + [
        ErrorSample((R(rng, 0, 3),), desc='empty_full_reduction'),
        ErrorSample((R(rng, 0, 3), 0), exc=IndexError, desc='empty_reduced_dim'),
        ErrorSample((R(rng, 2, 3), 1.5), exc=TypeError, desc='float_dim')]


def argmax_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4), 1), desc='dim1'),
            Sample((R(rng, 3, 4), -2), dict(keepdim=True), desc='neg_dim_keepdim'),
            Sample((R(rng, 3, 4),), dict(keepdim=True), desc='all_keepdim'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng), 0), desc='0dim_dim0'),
            Sample((R(rng, 0, 3), 1), desc='empty_nonreduced'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((I64(rng, 3, 4), 0), desc='int64'),
            Sample((ties(rng), 1), desc='ties_first_index'),
            Sample((np.array([[1., np.nan, 2.]], np.float32), 1), desc='nan')]


def argmax_errors(rng):
    return dim_errors(rng) + [
        ErrorSample((R(rng, 0, 3),), exc=IndexError, desc='empty_full_reduction'),
        ErrorSample((R(rng, 0, 3), 0), exc=IndexError, desc='empty_reduced_dim'),
        ErrorSample((B(rng, 2, 3),), desc='bool_input')]


# -- logsumexp, var, std, norm ---------------------------------------------------------------------

def logsumexp_samples(rng):
    return [Sample((R(rng, 3, 4), 1), desc='dim1'),
            Sample((R(rng, 3, 4), -2), desc='neg_dim'),
            Sample((R(rng, 3, 4), 1, True), desc='keepdim'),
            Sample((R(rng, 2, 3, 2), (0, 2)), desc='tuple_dims'),
            Sample((R(rng, 2, 3, 2), [0, 1, 2]), desc='all_dims'),
            Sample((R(rng), 0), desc='0dim'),
            Sample((R(rng, 0, 3), 1), desc='empty_nonreduced'),
            Sample((R(rng, 0, 3), 0), desc='empty_reduced_gives_neg_inf'),
            Sample((nc(R(rng, 4, 3), TR), 0), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((R(rng, 2, 3) * 50, 1), desc='large_values_stable'),
            Sample((np.array([[-np.inf, -np.inf], [np.inf, 1.]], np.float32), 1),
                   desc='infinities', requires_grad=False),
            Sample((I64(rng, 3, 4), 1), desc='int64_to_float')]


def logsumexp_errors(rng):
    return reduction_errors(rng) + [
        ErrorSample((R(rng, 2, 3),), exc=TypeError, desc='missing_dim')]


def var_samples(rng):
    s = [x for x in reduction_samples(rng) if x.desc != 'dtype_kw']
    for x in s:
        if x.desc.startswith('0dim'):     # one element: the variance is NaN
            x.gradcheck = False
    s += [Sample((R(rng, 3, 4),), dict(unbiased=False), desc='unbiased_false'),
          Sample((R(rng, 3, 4), 1, False, True), desc='positional_unbiased_keepdim'),
          Sample((R(rng, 3, 4), True), desc='positional_unbiased_only'),
          Sample((R(rng, 3, 4), 1), dict(correction=0), desc='correction0'),
          Sample((R(rng, 3, 4), 1), dict(correction=2, keepdim=True), desc='correction2'),
          Sample((R(rng, 2, 3, 2), (0, 1)), dict(correction=0.5), desc='correction_float'),
          # torch 2.13's backward for dim=[] uses N=1 (inf gradients): forward only
          Sample((R(rng, 3, 4), []), desc='empty_list_dims', requires_grad=False),
          Sample((R(rng, 3, 2), 1), dict(correction=2), desc='correction_equals_n',
                 requires_grad=False),
          Sample((R(rng, 3, 2), 1), dict(correction=5), desc='correction_above_n',
                 requires_grad=False),
          Sample((np.ones((2, 3), np.float32), 1), desc='constant_rows', gradcheck=False)]
    return s


def var_errors(rng):
    return reduction_errors(rng) + [
        ErrorSample((I64(rng, 2, 3),), desc='int_input'),
        ErrorSample((R(rng, 2, 3),), dict(unbiased=False, correction=0), exc=TypeError,
                    desc='unbiased_and_correction')]


def norm_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='fro_default'),
            Sample((R(rng, 3, 4), 2, 1), desc='p2_dim1'),
            Sample((R(rng, 3, 4), 1), desc='p1_all'),
            Sample((R(rng, 3, 4), 1, -1, True), desc='p1_dim_keepdim'),
            Sample((R(rng, 3, 4), float('inf')), desc='inf_all'),
            Sample((R(rng, 3, 4), float('inf'), 0), desc='inf_dim0'),
            Sample((R(rng, 3, 4), float('-inf'), 1), desc='neg_inf_dim1'),
            Sample((R(rng, 3, 4), 3), desc='p3'),
            Sample((R(rng, 3, 4), 0.5, 1), desc='p_half'),
            Sample((NZ(rng, 3, 4), -1, 1), desc='p_neg1'),
            Sample((R(rng, 3, 4), 0, 1), desc='p0_count'),
            Sample((R(rng, 2, 3, 2),), dict(p='fro', dim=(0, 2)), desc='fro_two_dims'),
            Sample((R(rng, 2, 3, 2),), dict(p='fro', dim=1), desc='fro_one_dim'),
            Sample((R(rng, 2, 3, 2),), dict(p=2, dim=(0, 1, 2), keepdim=True),
                   desc='p2_all_dims_keepdim'),
            Sample((R(rng, 3, 4),), dict(p=2, keepdim=True), desc='p2_keepdim_no_dim'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng),), dict(dim=0), desc='0dim_dim0'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((R(rng, 0, 3), float('inf'), 1), desc='empty_inf_nonreduced'),
            Sample((nc(R(rng, 4, 3), TR), 2, 0), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64), 2, 1), desc='f64'),
            Sample((R(rng, 2, 3),), dict(dtype=DT('float64')), desc='dtype_kw'),
            # at zero: torch's gradient is 0 (a subgradient), not NaN
            Sample((np.zeros((2, 3), np.float32), 2, 1), desc='zeros_p2', gradcheck=False),
            Sample((np.array([[0., 1., -2.], [0., 0., 0.]], np.float32), 3, 1),
                   desc='zeros_p3', gradcheck=False),
            Sample((np.array([[0., 1., -2.], [0., 0., 0.]], np.float32), 0.5, 1),
                   desc='zeros_p_half', gradcheck=False),
            Sample((np.array([[0., 1., -2.], [3., -3., 1.]], np.float32), float('inf'), 1),
                   desc='inf_ties', gradcheck=False),
            Sample((R(rng, 3, 4), 'nuc'), desc='nuc', check_grad_fn=False),
            Sample((R(rng, 2, 3, 4),), dict(p='nuc', dim=(1, 2), keepdim=True),
                   desc='nuc_batched', check_grad_fn=False)]


def norm_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), 2, (0, 0)), desc='repeated_dim'),
            ErrorSample((I64(rng, 2, 3),), desc='int_input'),
            ErrorSample((R(rng, 0, 3), float('inf')), desc='empty_inf'),
            ErrorSample((R(rng, 0, 3), float('inf'), 0), desc='empty_inf_reduced_dim'),
            ErrorSample((R(rng, 2, 3, 2), 'fro', (0, 1, 2)), desc='fro_three_dims'),
            ErrorSample((R(rng, 2, 3), 'abc'), desc='unknown_order'),
            ErrorSample((R(rng, 2, 3, 4), 'nuc'), desc='nuc_three_dims'),
            ErrorSample((R(rng, 3), 'nuc'), desc='nuc_vector')]


# -- all, any, count_nonzero -----------------------------------------------------------------------

def logical_samples(rng):
    def mixed(*shape):
        a = R(rng, *shape)
        a[rng.random(shape) < 0.3] = 0
        return a
    return [Sample((mixed(3, 4),), desc='all'),
            Sample((mixed(3, 4), 1), desc='dim1'),
            Sample((mixed(3, 4), -2, True), desc='neg_dim_keepdim'),
            Sample((mixed(2, 3, 2),), dict(dim=(0, 2)), desc='tuple_dims'),
            Sample((B(rng, 3, 4), 0), desc='bool'),
            Sample((I64(rng, 3, 4), 1), desc='int64'),
            Sample((np.array([[1, 0, 2], [3, 4, 5]], np.uint8), 1), desc='uint8_keeps_dtype'),
            Sample((np.array([[1, 0, 2], [3, 4, 5]], np.uint8),), desc='uint8_all'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((R(rng, 0, 3), 0), desc='empty_reduced_dim'),
            Sample((nc(mixed(4, 3), TR), 1), desc='noncontig')]


def count_nonzero_samples(rng):
    s = [x for x in logical_samples(rng) if 'keepdim' not in x.desc]
    s.append(Sample((R(rng, 3, 4), [0, 1]), desc='list_dims'))
    return s


# -- sorting and order statistics ------------------------------------------------------------------

def sort_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='default_last_dim'),
            Sample((R(rng, 3, 4), 0), desc='dim0'),
            Sample((R(rng, 3, 4), -1, True), desc='descending_positional'),
            Sample((R(rng, 2, 3, 2),), dict(dim=1, descending=True), desc='descending_kw'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3), 0), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig_T'),
            Sample((nc(R(rng, 3, 4), STEP),), desc='noncontig_step'),
            Sample((R(rng, 2, 3).astype(np.float64), 1), desc='f64'),
            Sample((I64(rng, 3, 4),), desc='int64'),
            Sample((B(rng, 3, 4), 1), desc='bool'),
            # stable sorts keep equal elements in their order (SortBackward1)
            Sample((ties(rng),), dict(stable=True), desc='stable_ties', gradcheck=False),
            Sample((ties(rng),), dict(stable=True, descending=True),
                   desc='stable_descending_ties', gradcheck=False),
            Sample((np.array([[2., np.nan, -1., np.nan, 0.]], np.float32),),
                   dict(stable=True), desc='nan_last', gradcheck=False),
            Sample((np.array([[2., np.nan, -1., np.nan, 0.]], np.float32),),
                   dict(descending=True, stable=True), desc='nan_first_descending',
                   gradcheck=False)]


def argsort_samples(rng):
    return [x for x in sort_samples(rng)]


def sort_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng), 1), exc=IndexError, desc='0dim_out_of_range')]


def topk_samples(rng):
    return [Sample((R(rng, 3, 5), 2), desc='k2'),
            Sample((R(rng, 3, 5), 3, 0), desc='dim0'),
            Sample((R(rng, 3, 5), 2, -1, False), desc='smallest'),
            Sample((R(rng, 2, 3, 4),), dict(k=1, dim=1), desc='3d_kw'),
            Sample((R(rng, 3, 5), 5), desc='k_equals_n'),
            Sample((R(rng, 3, 5), 0), desc='k0'),
            Sample((R(rng), 1), desc='0dim'),
            Sample((R(rng, 0, 3), 2), desc='empty_rows'),
            Sample((nc(R(rng, 5, 3), TR), 2), desc='noncontig'),
            Sample((R(rng, 2, 4).astype(np.float64), 2), desc='f64'),
            Sample((I64(rng, 3, 5), 2), desc='int64'),
            Sample((np.array([[2., 1., 2., 1.]], np.float32), 2), desc='ties_first_indices',
                   gradcheck=False)]


def topk_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 4), desc='k_too_large'),
            ErrorSample((R(rng, 2, 3), -1), desc='k_negative'),
            ErrorSample((R(rng, 2, 3), 1, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3), 2.0), exc=TypeError, desc='float_k')]


def kthvalue_samples(rng):
    return [Sample((R(rng, 3, 5), 2), desc='k2_last_dim'),
            Sample((R(rng, 3, 5), 1, 0), desc='dim0'),
            Sample((R(rng, 3, 5), 5, -1, True), desc='k_n_keepdim'),
            Sample((R(rng, 2, 3, 4),), dict(k=3, dim=1), desc='3d_kw'),
            Sample((R(rng), 1), desc='0dim'),
            Sample((R(rng, 0, 3), 1), desc='empty_rows'),
            Sample((nc(R(rng, 5, 3), TR), 2), desc='noncontig'),
            Sample((R(rng, 2, 4).astype(np.float64), 2), desc='f64'),
            Sample((I64(rng, 3, 5).astype(np.int64) * 10 + np.arange(5), 2), desc='int64')]


def kthvalue_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 4), desc='k_too_large'),
            ErrorSample((R(rng, 2, 3), 0), desc='k0'),
            ErrorSample((R(rng, 2, 3), 1, 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 0, 3), 1, 0), exc=IndexError, desc='empty_reduced_dim')]


def median_samples(*, nan=False):
    def gen(rng):
        s = [Sample((R(rng, 3, 5),), desc='all_odd'),
             Sample((R(rng, 3, 4),), desc='all_even_lower'),
             Sample((R(rng, 3, 5), 1), desc='dim1'),
             Sample((R(rng, 4, 3), 0, True), desc='dim0_keepdim'),
             Sample((R(rng, 2, 3, 4),), dict(dim=-1), desc='3d_neg_dim'),
             Sample((R(rng),), desc='0dim'),
             Sample((R(rng), 0), desc='0dim_dim0'),
             Sample((R(rng, 0, 3),), desc='empty_all_nan'),
             Sample((R(rng, 0, 3), 1), desc='empty_rows'),
             Sample((nc(R(rng, 5, 3), TR), 1), desc='noncontig'),
             Sample((R(rng, 2, 5).astype(np.float64), 1), desc='f64'),
             Sample((I64(rng, 3, 5) * 10 + np.arange(5), 1), desc='int64_dim'),
             Sample((I64(rng, 3, 5),), desc='int64_all'),
             # ties: median() splits the gradient among elements equal to the median
             Sample((np.array([[1., 2., 2.], [2., 0., 3.]], np.float32),), desc='ties_all',
                    gradcheck=False),
             Sample((np.array([[1., np.nan, 2.], [3., 0., np.nan]], np.float32),),
                    desc='nan_all', gradcheck=False),
             Sample((np.array([[1., np.nan, 2., 0.], [3., 0., 5., 1.]], np.float32), 1),
                    desc='nan_dim', gradcheck=False)]
        if nan:
            s += [Sample((np.array([[np.nan, np.nan, 1.], [np.nan] * 3], np.float32), 1),
                         desc='all_nan_row', gradcheck=False)]
        return s
    return gen


def median_errors(rng):
    return dim_errors(rng) + [
        ErrorSample((R(rng, 0, 3), 0), exc=IndexError, desc='empty_reduced_dim'),
        ErrorSample((R(rng, 2, 3),), dict(keepdim=True), exc=TypeError,
                    desc='keepdim_without_dim')]


def mode_samples(rng):
    def small_ints(*shape):
        return np.asarray(rng.integers(0, 3, shape), np.float32)
    # The mode of small integers always has ties: finite differences are ill-posed there.
    s = [Sample((small_ints(3, 6),), desc='default_last_dim'),
            Sample((small_ints(6, 3), 0), desc='dim0'),
            Sample((small_ints(3, 6), -1, True), desc='keepdim'),
            Sample((small_ints(2, 3, 5),), dict(dim=1), desc='3d'),
            Sample((R(rng, 3, 4),), desc='all_distinct_smallest'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty_rows'),
            Sample((nc(small_ints(6, 3), TR),), desc='noncontig'),
            Sample((small_ints(2, 5).astype(np.float64), 1), desc='f64'),
            Sample((I64(rng, 3, 6),), desc='int64'),
            Sample((np.array([[1., 2., 1., 2.], [3., 1., 3., 1.]], np.float32),),
                   desc='equal_counts_smallest_last_index'),
            Sample((np.array([1., np.nan, 3.], np.float32),), desc='nan')]
    for x in s:
        if x.desc != 'all_distinct_smallest':
            x.gradcheck = False
    return s


def mode_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 0, 3), 0), exc=IndexError, desc='empty_reduced_dim')]


def kw_method(name):
    """A function form that only exists as ``torch.<name>`` (not as a method)."""
    def fn(lib, *args, **kwargs):
        return getattr(lib, name)(*args, **kwargs)
    return fn


# -- issue 16: aminmax, logcumsumexp, msort, renorm, dist, addr -----------------------------

def aminmax_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='all'),
            Sample((R(rng, 3, 4),), dict(dim=1), desc='dim1'),
            Sample((R(rng, 3, 4),), dict(dim=-2, keepdim=True), desc='neg_dim_keepdim'),
            Sample((R(rng, 2, 3, 2),), dict(keepdim=True), desc='all_keepdim'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng),), dict(dim=0), desc='0dim_dim0'),
            Sample((R(rng, 0, 3),), dict(dim=1), desc='empty_nonreduced'),
            Sample((nc(R(rng, 4, 3), TR),), dict(dim=0), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64),), dict(dim=1), desc='f64'),
            Sample((I64(rng, 3, 4),), dict(dim=1), desc='int64'),
            Sample((B(rng, 3, 4),), desc='bool'),
            Sample((ties(rng),), dict(dim=1), desc='ties', gradcheck=False,
                   check_grad_fn=False)]


def aminmax_errors(rng):
    return [ErrorSample((R(rng, 0, 3),), desc='empty_all'),
            ErrorSample((R(rng, 0, 3),), dict(dim=0), exc=IndexError, desc='empty_reduced_dim'),
            ErrorSample((R(rng, 2, 3),), dict(dim=2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((R(rng, 2, 3),), dict(dim=(0, 1)), exc=TypeError, desc='tuple_dim')]


def logcumsumexp_samples(rng):
    s = [x for x in scan_samples(ints=False)(rng)]
    s += [Sample((R(rng, 3, 4) * 40, 1), desc='large_values'),
          Sample((np.array([[-np.inf, 0., 1.], [-np.inf, -np.inf, 2.]], np.float32), 1),
                 desc='neg_inf', gradcheck=False)]
    return s


def logcumsumexp_errors(rng):
    return dim_errors(rng) + [ErrorSample((I64(rng, 2, 3), 1), exc=NotImplementedError,
                                          desc='int_input')]


def msort_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'),
            Sample((R(rng, 5),), desc='1d'),
            Sample((R(rng),), desc='0dim'),
            Sample((R(rng, 0, 3),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((R(rng, 2, 3).astype(np.float64),), desc='f64'),
            Sample((I64(rng, 3, 4),), desc='int64')]


def renorm_samples(rng):
    big = lambda *s: R(rng, *s) * 2  # noqa: E731
    return [Sample((big(3, 4), 2, 0, 1.5), desc='p2_dim0'),
            Sample((big(3, 4), 1, 1, 2.0), desc='p1_dim1'),
            Sample((big(2, 3, 2), 3, -1, 1.0), desc='p3_3d'),
            Sample((big(3, 4), 2.5, 0, 100.0), desc='nothing_scaled'),
            Sample((big(3, 4), 2, 1, 0.0), desc='maxnorm0', gradcheck=False),
            Sample((R(rng, 0, 3), 2, 0, 1.0), desc='empty'),
            Sample((nc(big(4, 3), TR), 2, 0, 1.0), desc='noncontig'),
            Sample((big(3, 4).astype(np.float64), 2, 0, 1.5), desc='f64')]


def renorm_errors(rng):
    return [ErrorSample((R(rng, 3, 3), -1, 0, 1.0), desc='negative_p'),
            ErrorSample((R(rng, 3, 3), 2, 0, -1.0), desc='negative_maxnorm'),
            ErrorSample((R(rng, 3), 2, 0, 1.0), desc='1d'),
            ErrorSample((R(rng, 3, 3), 2, 2, 1.0), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((I64(rng, 3, 3), 2, 0, 1.0), desc='int_input')]


def dist_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='p2'),
            Sample((R(rng, 3, 4), R(rng, 4), 1), desc='p1_broadcast'),
            Sample((R(rng, 3, 4), R(rng, 3, 4), 3.5), desc='p3_5'),
            Sample((R(rng, 3, 4), R(rng, 3, 1), float('inf')), desc='inf', gradcheck=False),
            # torch 2.13's backward of p=0 fails (an undefined gradient): forward only
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(p=0), desc='p0', requires_grad=False),
            Sample((R(rng), R(rng, 3)), desc='0dim'),
            Sample((R(rng, 0, 3), R(rng, 3)), desc='empty'),
            Sample((R(rng, 2, 3).astype(np.float64), R(rng, 2, 3).astype(np.float64)),
                   desc='f64')]


def dist_errors(rng):
    return [ErrorSample((R(rng, 2), R(rng, 3)), desc='shape_mismatch'),
            ErrorSample((I64(rng, 3), I64(rng, 3)), desc='int_input')]


def addr_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3), R(rng, 4)), desc='default'),
            Sample((R(rng, 3, 4), R(rng, 3), R(rng, 4)), dict(beta=0.5, alpha=2.0),
                   desc='beta_alpha'),
            Sample((R(rng, 4), R(rng, 3), R(rng, 4)), desc='broadcast_input'),
            Sample((R(rng), R(rng, 2), R(rng, 3)), dict(alpha=-1.5), desc='0dim_input'),
            Sample((np.full((2, 3), np.nan, np.float32), R(rng, 2), R(rng, 3)),
                   dict(beta=0), desc='beta0_ignores_nan', gradcheck=False),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3), R(rng, 4)), desc='noncontig'),
            Sample((R(rng, 3, 4).astype(np.float64), R(rng, 3).astype(np.float64),
                    R(rng, 4).astype(np.float64)), desc='f64'),
            Sample((I64(rng, 2, 3), I64(rng, 2), I64(rng, 3)), dict(beta=2, alpha=3),
                   desc='int64'),
            # torch 2.13's backward of mixed dtypes fails (its addmv refuses them): forward only
            Sample((R(rng, 3, 4), R(rng, 3), R(rng, 4).astype(np.float64)), desc='promotes',
                   requires_grad=False)]


def addr_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 1), R(rng, 4)), desc='vec1_2d'),
            ErrorSample((R(rng, 3, 3), R(rng, 3), R(rng, 4)), desc='input_shape'),
            ErrorSample((I64(rng, 2, 3), I64(rng, 2), I64(rng, 3)), dict(beta=0.5),
                        desc='int_input_float_beta')]


OPS = [
    # reductions
    OpInfo('sum', None, sum_samples, method='sum', errors=reduction_errors),
    OpInfo('mean', None, reduction_samples, method='mean', errors=mean_errors),
    OpInfo('nansum', None, nansum_samples, method='nansum', errors=reduction_errors),
    OpInfo('nanmean', None, nan_samples, method='nanmean', errors=mean_errors),
    OpInfo('prod', None, prod_samples, method='prod', errors=prod_errors),
    OpInfo('amax', None, amax_samples, method='amax', errors=amax_errors),
    OpInfo('amin', None, amax_samples, method='amin', errors=amax_errors),
    OpInfo('max', None, max_samples, method='max', errors=max_errors),
    OpInfo('min', None, max_samples, method='min', errors=max_errors),
    OpInfo('argmax', None, argmax_samples, method='argmax', errors=argmax_errors,
           differentiable=False),
    OpInfo('argmin', None, argmax_samples, method='argmin', errors=argmax_errors,
           differentiable=False),
    OpInfo('logsumexp', None, logsumexp_samples, method='logsumexp', errors=logsumexp_errors),
    OpInfo('var', None, var_samples, method='var', errors=var_errors),
    OpInfo('std', None, var_samples, method='std', errors=var_errors),
    OpInfo('var_mean', kw_method('var_mean'), var_samples, errors=var_errors),
    OpInfo('std_mean', kw_method('std_mean'), var_samples, errors=var_errors),
    OpInfo('norm', None, norm_samples, method='norm', errors=norm_errors),
    OpInfo('all', None, logical_samples, method='all', errors=reduction_errors,
           differentiable=False),
    OpInfo('any', None, logical_samples, method='any', errors=reduction_errors,
           differentiable=False),
    OpInfo('count_nonzero', None, count_nonzero_samples, method='count_nonzero',
           errors=reduction_errors, differentiable=False),
    # scans
    OpInfo('cumsum', None, scan_samples(), method='cumsum', inplace='cumsum_',
           errors=scan_errors),
    OpInfo('cumprod', None, scan_samples(zeros=True), method='cumprod', inplace='cumprod_',
           errors=scan_errors),
    OpInfo('cummax', None, cummax_samples, method='cummax', errors=scan_errors),
    OpInfo('cummin', None, cummax_samples, method='cummin', errors=scan_errors),
    # sorting and order statistics
    OpInfo('sort', None, sort_samples, method='sort', errors=sort_errors),
    OpInfo('argsort', None, argsort_samples, method='argsort', errors=sort_errors,
           differentiable=False),
    OpInfo('topk', None, topk_samples, method='topk', errors=topk_errors),
    OpInfo('kthvalue', None, kthvalue_samples, method='kthvalue', errors=kthvalue_errors),
    OpInfo('median', None, median_samples(), method='median', errors=median_errors),
    OpInfo('nanmedian', None, median_samples(nan=True), method='nanmedian',
           errors=median_errors),
    OpInfo('mode', None, mode_samples, method='mode', errors=mode_errors),
    # issue 16
    OpInfo('aminmax', None, aminmax_samples, method='aminmax', errors=aminmax_errors),
    OpInfo('logcumsumexp', None, logcumsumexp_samples, method='logcumsumexp',
           errors=logcumsumexp_errors),
    OpInfo('msort', None, msort_samples, method='msort'),
    OpInfo('renorm', None, renorm_samples, method='renorm', inplace='renorm_',
           errors=renorm_errors),
    OpInfo('dist', None, dist_samples, method='dist', errors=dist_errors),
    OpInfo('addr', None, addr_samples, method='addr', inplace='addr_', errors=addr_errors),
]
