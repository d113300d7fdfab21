"""dynagrad.nn.attention (sdpa_kernel, SDPBackend) and flex_attention against torch's:
the same BlockMask layouts, outputs, log-sum-exps and gradients."""
import numpy as np
import pytest
import torch
import torch.nn.attention as their_attention
import torch.nn.attention.flex_attention as theirs

import dynagrad
import dynagrad.nn.attention as my_attention
import dynagrad.nn.attention.flex_attention as mine

pytestmark = pytest.mark.filterwarnings('ignore:flex_attention called without torch.compile')


def causal(b, h, q, kv):
    return q >= kv


def sliding(b, h, q, kv):
    return (q - kv <= 3) & (q >= kv)


def even_batch_only(b, h, q, kv):
    return (b % 2 == 0) | (kv < 2)


def nothing(b, h, q, kv):
    return q < 0


MASK_CASES = [(causal, 2, None, 5, 7, 2), (sliding, None, 2, 9, 9, 4),
              (causal, 1, 1, 300, 260, 128),
              (even_batch_only, 3, None, 6, 5, (2, 3)), (nothing, None, None, 4, 4, 2),
              (causal, 1, 1, 8, 8, 4)]


@pytest.mark.parametrize('mod,B,H,Q,KV,block', MASK_CASES)
def test_block_mask_layout_matches_torch(mod, B, H, Q, KV, block):
    m = mine.create_block_mask(mod, B, H, Q, KV, BLOCK_SIZE=block)
    t = theirs.create_block_mask(mod, B, H, Q, KV, device='cpu', BLOCK_SIZE=block)
    for name in ['kv_num_blocks', 'kv_indices', 'full_kv_num_blocks', 'full_kv_indices',
                 'q_num_blocks', 'q_indices', 'full_q_num_blocks', 'full_q_indices']:
        a, b = getattr(m, name), getattr(t, name)
        assert a.dtype == dynagrad.int32 and b.dtype == torch.int32, name
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    assert (m.shape, m.seq_lengths, m.BLOCK_SIZE) == (t.shape, t.seq_lengths, t.BLOCK_SIZE)
    assert m.sparsity() == pytest.approx(t.sparsity())
    np.testing.assert_array_equal(m.to_dense().numpy(), t.to_dense().numpy())
    assert repr(m).replace('dynagrad', 'torch') == repr(t)
    np.testing.assert_array_equal(mine.create_mask(mod, B, H, Q, KV).numpy(),
                                  theirs.create_mask(mod, B, H, Q, KV, device='cpu').numpy())
    assert m[0].shape == t[0].shape


def _pair(*shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    return dynagrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _reference(q, k, v, score_mod=None, block_mask=None, scale=None, enable_gqa=False):
    """flex_attention written with plain torch ops (PyTorch's flex_attention has no
    backward on the CPU): the gradients' oracle."""
    B, H, L, E = q.shape
    S = k.shape[2]
    if enable_gqa:
        k = k.repeat_interleave(H // k.shape[1], 1)
        v = v.repeat_interleave(H // v.shape[1], 1)
    scores = q @ k.transpose(-2, -1) * (E ** -0.5 if scale is None else scale)
    if score_mod is not None:
        idx = (torch.arange(B).view(B, 1, 1, 1), torch.arange(H).view(1, H, 1, 1),
               torch.arange(L).view(1, 1, L, 1), torch.arange(S).view(1, 1, 1, S))
        scores = score_mod(scores, *idx)
    if block_mask is not None:
        allowed = theirs.create_mask(block_mask.mask_mod, B, H, L, S, device='cpu')
        scores = scores.masked_fill(~allowed, float('-inf'))
    lse = scores.logsumexp(-1)
    empty = lse.isneginf().unsqueeze(-1)
    return scores.masked_fill(empty, 0).softmax(-1).masked_fill(empty, 0) @ v, lse


def _check(kwargs_for, Hq=2, Hkv=2, L=6, S=7, E=4, Ev=3, **extra):
    (qm, qt), (km, kt), (vm, vt) = (_pair(2, Hq, L, E, seed=1), _pair(2, Hkv, S, E, seed=2),
                                    _pair(2, Hkv, S, Ev, seed=3))
    om, aux_m = mine.flex_attention(qm, km, vm, return_aux=mine.AuxRequest(lse=True),
                                    **kwargs_for(mine), **extra)
    ot, aux_t = theirs.flex_attention(qt.detach(), kt.detach(), vt.detach(),
                                      return_aux=theirs.AuxRequest(lse=True),
                                      **kwargs_for(theirs), **extra)
    np.testing.assert_allclose(om.detach().numpy(), ot.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(aux_m.lse.detach().numpy(), aux_t.lse.numpy(),
                               rtol=1e-10, atol=1e-12)
    rt, lse_t = _reference(qt, kt, vt, **kwargs_for(theirs), **extra)
    np.testing.assert_allclose(rt.detach().numpy(), ot.numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(4).standard_normal(tuple(ot.shape))
    (om * dynagrad.tensor(w)).sum().backward()
    (rt * torch.tensor(w)).sum().backward()
    for a, b in ((qm, qt), (km, kt), (vm, vt)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_plain_flex_attention_is_attention():
    _check(lambda lib: {})


def test_block_masks_and_empty_rows():
    _check(lambda lib: {'block_mask': lib.create_block_mask(sliding, None, None, 6, 7,
                                                            BLOCK_SIZE=2, device='cpu')
                        if lib is theirs else lib.create_block_mask(sliding, None, None, 6, 7,
                                                                    BLOCK_SIZE=2)})
    # query 0 attends to nothing: zeros and a -inf log-sum-exp, as in PyTorch
    _check(lambda lib: {'block_mask': lib.create_block_mask(
        lambda b, h, q, kv: kv < q, 2, 2, 6, 7, BLOCK_SIZE=4,
        **({'device': 'cpu'} if lib is theirs else {}))})


def test_score_mod_with_captured_tensor_and_scale():
    bias = np.random.default_rng(5).standard_normal((2, 6, 7))

    def score_mod_for(lib):
        table = (dynagrad if lib is mine else torch).tensor(bias)
        return {'score_mod': lambda s, b, h, q, kv: s + table[h, q, kv] * (q - kv),
                'scale': 0.3}
    _check(score_mod_for)


def test_grouped_query_attention_and_errors():
    _check(lambda lib: {}, Hq=4, Hkv=2, enable_gqa=True)
    q = dynagrad.ones(1, 4, 3, 2)
    kv = dynagrad.ones(1, 2, 3, 2)
    with pytest.raises(ValueError, match='Try setting enable_gqa=True'):
        mine.flex_attention(q, kv, kv)
    with pytest.raises(NotImplementedError, match='must be 4D tensors'):
        mine.flex_attention(q[0], kv[0], kv[0])
    with pytest.raises(NotImplementedError, match='max scores is not supported on CPU'):
        mine.flex_attention(q, q, q, return_aux=mine.AuxRequest(max_scores=True))
    with pytest.warns(FutureWarning, match='return_lse is deprecated'):
        out, lse = mine.flex_attention(q, q, q, return_lse=True)
    assert lse.shape == (1, 4, 3)


def test_mask_combinators():
    both = mine.and_masks(causal, sliding)
    either = mine.or_masks(nothing, causal)
    for combined, reference in ((both, theirs.and_masks(causal, sliding)),
                                (either, theirs.or_masks(nothing, causal))):
        np.testing.assert_array_equal(mine.create_mask(combined, 1, 1, 6, 6).numpy(),
                                      theirs.create_mask(reference, 1, 1, 6, 6,
                                                         device='cpu').numpy())
    assert mine._DEFAULT_SPARSE_BLOCK_SIZE == theirs._DEFAULT_SPARSE_BLOCK_SIZE


def test_sdpa_kernel_sets_and_restores_the_switches_as_torch():
    names = ['math_sdp_enabled', 'flash_sdp_enabled', 'mem_efficient_sdp_enabled',
             'cudnn_sdp_enabled']

    def flags(backends):
        return [getattr(backends.cuda, n)() for n in names]
    assert [(m.name, m.value) for m in my_attention.SDPBackend] == \
        [(t.name, t.value) for t in their_attention.SDPBackend.__members__.values()]
    assert repr(my_attention.SDPBackend.MATH) == repr(their_attention.SDPBackend.MATH)
    assert str(my_attention.SDPBackend.MATH) == str(their_attention.SDPBackend.MATH)
    for chosen in (['MATH'], ['FLASH_ATTENTION', 'EFFICIENT_ATTENTION'], []):
        with my_attention.sdpa_kernel([getattr(my_attention.SDPBackend, c) for c in chosen]):
            with their_attention.sdpa_kernel([getattr(their_attention.SDPBackend, c)
                                              for c in chosen]):
                assert flags(dynagrad.backends) == flags(torch.backends)
        assert flags(dynagrad.backends) == flags(torch.backends) == [True] * 4
    with my_attention.sdpa_kernel(my_attention.SDPBackend.FLASH_ATTENTION):
        assert flags(dynagrad.backends) == [False, True, False, False]
    for lib in (my_attention, their_attention):
        with pytest.raises(AssertionError, match='Backend must be an instance of SDPBackend'):
            with lib.sdpa_kernel('math'):
                pass
