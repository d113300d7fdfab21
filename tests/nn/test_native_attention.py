"""scaled_dot_product_attention's native kernels (``dynagrad.native.attention``): the
fused scale + mask + softmax of the forward and the fused softmax gradient of the backward,
against the NumPy path (kernels off) and torch, values and gradients of q, k, v and of a
float mask; causal, boolean and additive masks, scales, odd lengths, dropout, rows the mask
hides entirely; the conformance rows of the attention ops in both kernel modes."""
import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as F
from dynagrad.autograd import gradcheck

from native_support import table_columns, kernels_counted, needs_numba
from ops import test_conformance as conformance

KERNELS = ('attention_probs', 'attention_probs_backward')
ATTENTION_OPS = ('nn.functional.scaled_dot_product_attention',
                 'nn.functional.multi_head_attention_forward')
ROWS, GRADCHECK_ROWS, test_row, test_row_gradcheck = table_columns(ATTENTION_OPS)


def counting(mode):
    """Run with ``mode`` kernels; yields a dict counting the attention kernels' calls."""
    return kernels_counted(mode, KERNELS)


def test_rows_exist():
    assert {p.values[0].name for p in ROWS} == set(ATTENTION_OPS)
    assert GRADCHECK_ROWS




@needs_numba
@pytest.mark.filterwarnings('ignore::UserWarning')
def test_the_native_column_runs_the_kernels():
    with counting('native') as calls:
        for op, sample, i in (p.values for p in ROWS):
            if sample.has_float_input and not sample.has_empty:
                conformance.check_row(op, sample, i)
    assert set(calls) == set(KERNELS), sorted(calls)


# -- against the NumPy path and torch ---------------------------------------------------

def _inputs(rng, dt, q_shape, kv_len, ev=None, mask=None):
    *batch, L, E = q_shape
    ev = E if ev is None else ev
    arrays = [rng.standard_normal(q_shape), rng.standard_normal((*batch, kv_len, E)),
              rng.standard_normal((*batch, kv_len, ev)), rng.standard_normal((*batch, L, ev))]
    return [a.astype(dt) for a in arrays], mask


def _run(lib, arrays, mask, kwargs, seed=None):
    """Output and gradients of q, k, v (and of a float mask) for upstream ``arrays[3]``."""
    q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays[:3])
    m = None
    if mask is not None:
        m = lib.tensor(mask, requires_grad=mask.dtype != np.bool_)
    if seed is not None:
        lib.manual_seed(seed)
    f = F if lib is dynagrad else torch.nn.functional
    out = f.scaled_dot_product_attention(q, k, v, attn_mask=m, **kwargs)
    out.backward(lib.tensor(arrays[3]))
    res = [out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()]
    if m is not None and m.requires_grad:
        res.append(m.grad.numpy())
    return res


def _tol(dt):
    return dict(rtol=2e-5, atol=2e-6) if dt == np.float32 else dict(rtol=1e-12, atol=1e-13)


def _check(arrays, mask, kwargs, dt, against_torch=True):
    with counting('native') as calls:
        got = _run(dynagrad, arrays, mask, kwargs)
    assert calls == {'attention_probs': 1, 'attention_probs_backward': 1}, calls
    with counting('numpy'):
        ref = _run(dynagrad, arrays, mask, kwargs)
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        assert a.dtype == dt
        np.testing.assert_allclose(a, b, **_tol(dt))
    if against_torch:
        expected = _run(torch, arrays, mask, kwargs)
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, **_tol(dt))


CASES = {
    'plain': ((2, 3, 5, 4), 7, None, {}),
    'causal': ((2, 3, 6, 4), 6, None, dict(is_causal=True)),
    'causal L>S': ((2, 9, 4), 5, None, dict(is_causal=True)),
    'causal L<S': ((2, 4, 4), 11, None, dict(is_causal=True)),
    'scale': ((3, 5, 8), 13, None, dict(scale=0.3)),
    'odd lengths, value width': ((2, 2, 17, 3), 29, 5, {}),
    'float mask (L, S)': ((2, 3, 5, 4), 7, 'float2', {}),
    'float mask (B, 1, L, S)': ((2, 3, 5, 4), 7, 'float4', {}),
    'float mask (S,)': ((2, 3, 5, 4), 7, 'float1', {}),
    'bool mask (B, 1, 1, S)': ((2, 3, 5, 4), 7, 'bool', dict(scale=2.0)),
    '-inf mask': ((2, 3, 5, 4), 7, 'neginf', {}),
}


def _mask(rng, kind, dt, q_shape, S):
    batch, L = q_shape[:-2], q_shape[-2]
    if kind is None:
        return None
    if kind == 'float2':
        return rng.standard_normal((L, S)).astype(dt)
    if kind == 'float4':
        return rng.standard_normal((batch[0], 1, L, S)).astype(dt)
    if kind == 'float1':
        return rng.standard_normal(S).astype(dt)
    if kind == 'bool':
        m = rng.random((batch[0], 1, 1, S)) > 0.4
        m[..., 0] = True
        return m
    m = np.where(rng.random((*batch, L, S)) > 0.5, 0.0, -np.inf)
    m[..., 0] = 0.0
    return m.astype(dt)


@needs_numba
@pytest.mark.parametrize('dt', [np.float32, np.float64], ids=['float32', 'float64'])
@pytest.mark.parametrize('case', list(CASES))
def test_matches_numpy_path_and_torch(case, dt):
    rng = np.random.default_rng(len(case))
    q_shape, S, ev, kwargs = CASES[case][0], CASES[case][1], None, CASES[case][3]
    if case == 'odd lengths, value width':
        ev = 5
    mask = _mask(rng, CASES[case][2], dt, q_shape, S)
    arrays, mask = _inputs(rng, dt, q_shape, S, ev, mask)
    _check(arrays, mask, kwargs, dt)


@needs_numba
@pytest.mark.parametrize('dt', [np.float32, np.float64], ids=['float32', 'float64'])
def test_rows_masked_entirely_give_zeros(dt):
    """Boolean and -inf masks hiding every key of some rows: zeros there (torch's too),
    and no NaN in any gradient."""
    rng = np.random.default_rng(3)
    arrays, _ = _inputs(rng, dt, (2, 2, 6, 4), 5)
    hide = rng.random((6, 5)) > 0.3
    hide[[1, 4]] = False
    for mask in (hide, np.where(hide, 0.0, -np.inf).astype(dt)):
        _check(arrays, mask, {}, dt)
        with counting('native'):
            out = _run(dynagrad, arrays, mask, {})
        assert (out[0][:, :, [1, 4]] == 0).all()
        assert all(np.isfinite(a).all() for a in out)


@needs_numba
def test_nan_scores_stay_nan():
    """A row whose scores are all NaN is NaN, not taken for a hidden row (zeros)."""
    rng = np.random.default_rng(4)
    arrays, _ = _inputs(rng, np.float32, (2, 4, 3), 5)
    arrays[0][1, 2] = np.nan
    mask = np.zeros((4, 5), np.float32)
    mask[3] = -np.inf
    results = []
    for mode in ('native', 'numpy'):
        with counting(mode):
            results.append(F.scaled_dot_product_attention(
                *(dynagrad.tensor(a) for a in arrays[:3]),
                attn_mask=dynagrad.tensor(mask)).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=2e-5, atol=2e-6)  # NaN == NaN
    assert np.isnan(results[0][1, 2]).all() and (results[0][:, 3] == 0).all()
    assert np.isfinite(results[0][0, :3]).all()


@needs_numba
def test_gpt_and_workload_shapes_float32():
    """The benchmark shapes, float32 native against the float64 NumPy path."""
    rng = np.random.default_rng(5)
    for shape, kwargs in (((12, 4, 64, 32), dict(is_causal=True)), ((8, 128, 64), {})):
        arrays, _ = _inputs(rng, np.float64, shape, shape[-2])
        with counting('numpy'):
            ref = _run(dynagrad, arrays, None, kwargs)
        with counting('native') as calls:
            got = _run(dynagrad, [a.astype(np.float32) for a in arrays], None, kwargs)
        assert calls == {'attention_probs': 1, 'attention_probs_backward': 1}
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=5e-6)


@needs_numba
@pytest.mark.parametrize('causal', [False, True])
def test_dropout_same_masks_as_numpy_path(causal):
    """With dropout the forward's weights are dropped as before (same generator draws), and
    the backward kernel applies the same keep mask."""
    rng = np.random.default_rng(6)
    arrays, _ = _inputs(rng, np.float64, (2, 3, 7, 4), 7)
    kwargs = dict(dropout_p=0.3, is_causal=causal)
    with counting('native') as calls:
        got = _run(dynagrad, arrays, None, kwargs, seed=11)
    assert calls == {'attention_probs': 1, 'attention_probs_backward': 1}
    with counting('numpy'):
        ref = _run(dynagrad, arrays, None, kwargs, seed=11)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    with counting('numpy'):
        no_drop = _run(dynagrad, arrays, None, dict(is_causal=causal))
    assert not np.allclose(got[0], no_drop[0])


@needs_numba
@pytest.mark.parametrize('mask_kind', [None, 'float', 'bool', 'causal'])
def test_gradcheck_float64(mask_kind):
    rng = np.random.default_rng(7)
    q, k, v = (dynagrad.tensor(rng.standard_normal(s), requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    inputs, kwargs = [q, k, v], {}
    if mask_kind == 'float':
        inputs.append(dynagrad.tensor(rng.standard_normal((3, 5)), requires_grad=True))
    elif mask_kind == 'bool':
        m = rng.random((3, 5)) > 0.4
        m[:, 0] = True
        kwargs['attn_mask'] = dynagrad.tensor(m)
    elif mask_kind == 'causal':
        kwargs['is_causal'] = True

    def fn(q, k, v, mask=None):
        if mask is not None:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return F.scaled_dot_product_attention(q, k, v, **kwargs)
    with counting('native') as calls:
        assert gradcheck(fn, inputs)
    assert calls.get('attention_probs') and calls.get('attention_probs_backward')


@needs_numba
def test_double_backward_matches_numpy_path():
    """create_graph=True re-runs P with recorded ops (also for rows the mask hides)."""
    hide = np.random.default_rng(8).random((4, 5)) > 0.3
    hide[2] = False
    hide[0, 0] = True
    results = []
    for mode in ('native', 'numpy'):
        with counting(mode):
            rng = np.random.default_rng(8)
            q, k, v = (dynagrad.tensor(rng.standard_normal(s), requires_grad=True)
                       for s in ((1, 4, 3), (1, 5, 3), (1, 5, 2)))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=dynagrad.tensor(hide))
            gq, = dynagrad.autograd.grad((out * out).sum(), [q], create_graph=True)
            (gq * gq).sum().backward()
            results.append([gq.detach().numpy(), q.grad.numpy(), k.grad.numpy(),
                            v.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    assert np.isfinite(results[0][1]).all()


@needs_numba
def test_mask_with_more_batch_dimensions_keeps_the_numpy_path():
    """A mask that widens the scores' batch shape (torch refuses it; dynagrad broadcasts):
    no kernel, and the same result as with the kernels off."""
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (5, 3), (5, 2)))
    mask = rng.standard_normal((2, 4, 5)).astype(np.float32)
    with counting('native') as calls:
        out = F.scaled_dot_product_attention(*(dynagrad.tensor(a) for a in (q, k, v)),
                                             attn_mask=dynagrad.tensor(mask))
    assert 'attention_probs' not in calls
    with counting('numpy'):
        expected = F.scaled_dot_product_attention(*(dynagrad.tensor(a) for a in (q, k, v)),
                                                  attn_mask=dynagrad.tensor(mask))
    assert tuple(out.shape) == (2, 4, 2)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


@needs_numba
def test_float16_widened():
    """float16 computes in float32 inside the op (the kernel serves it) and rounds back."""
    rng = np.random.default_rng(10)
    arrays = [rng.standard_normal(s).astype(np.float16) for s in ((2, 6, 4), (2, 7, 4),
                                                                    (2, 7, 3))]
    with counting('native'):
        got = F.scaled_dot_product_attention(*(dynagrad.tensor(a) for a in arrays),
                                             is_causal=True)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(a) for a in arrays), is_causal=True)
    assert got.dtype == dynagrad.float16
    np.testing.assert_allclose(got.numpy().astype(np.float32),
                               expected.numpy().astype(np.float32), rtol=2e-3, atol=2e-3)
