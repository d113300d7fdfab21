"""F.multi_head_attention_forward and F.grouped_mm against torch: what the conformance table
cannot express (shared query/key/value objects, the module delegating to the function,
warnings, bfloat16/float16, second derivatives, PyTorch's exact error texts)."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
import dynagrad.nn.functional as DF
import torch.nn.functional as TF

E, H, L, S, N = 8, 2, 3, 4, 2


def arr(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def both(a, grad=True):
    """The same float64 array as a dynagrad and a torch leaf."""
    d, t = dynagrad.from_numpy(np.array(a)), torch.from_numpy(np.array(a))
    return (d.requires_grad_(), t.requires_grad_()) if grad else (d, t)


def close(d, t, tol=1e-10):
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def params(seed=1, kv=False, separate=False):
    """(dynagrad, torch) lists of the weight arguments after embed_dim/num_heads."""
    w = dict(in_proj_weight=arr(3 * E, E, seed=seed, scale=0.4),
             in_proj_bias=arr(3 * E, seed=seed + 1),
             out_proj_weight=arr(E, E, seed=seed + 2, scale=0.4),
             out_proj_bias=arr(E, seed=seed + 3))
    if kv:
        w.update(bias_k=arr(1, 1, E, seed=seed + 4), bias_v=arr(1, 1, E, seed=seed + 5))
    if separate:
        w.update(q_proj_weight=arr(E, E, seed=seed + 6, scale=0.4),
                 k_proj_weight=arr(E, 5, seed=seed + 7, scale=0.4),
                 v_proj_weight=arr(E, 6, seed=seed + 8, scale=0.4))
    return {k: both(v) for k, v in w.items()}


def call(lib, q, k, v, p, side, **kwargs):
    """F.multi_head_attention_forward on one library; p holds (dynagrad, torch) pairs."""
    get = {n: pair[side] for n, pair in p.items()}
    F = lib.nn.functional
    return F.multi_head_attention_forward(
        q, k, v, E, H, get.get('in_proj_weight'), get['in_proj_bias'], get.get('bias_k'),
        get.get('bias_v'), kwargs.pop('add_zero_attn', False), kwargs.pop('dropout_p', 0.0),
        get['out_proj_weight'], get['out_proj_bias'],
        q_proj_weight=get.get('q_proj_weight'), k_proj_weight=get.get('k_proj_weight'),
        v_proj_weight=get.get('v_proj_weight'), **kwargs)


def check_grads(d_out, t_out, leaves):
    g = arr(*t_out.shape, seed=9)
    d_out.backward(dynagrad.from_numpy(g.copy()))
    t_out.backward(torch.from_numpy(g.copy()))
    for d, t in leaves:
        close(d.grad, t.grad)


# -- multi_head_attention_forward ---------------------------------------------------------

@pytest.mark.parametrize('need_weights', [True, False])
def test_self_attention_one_tensor(need_weights):
    # query is key is value: PyTorch projects once (one GEMM); values and gradients match
    x = both(arr(L, N, E))
    p = params()
    d_out, d_w = call(dynagrad, x[0], x[0], x[0], p, 0, need_weights=need_weights)
    t_out, t_w = call(torch, x[1], x[1], x[1], p, 1, need_weights=need_weights)
    close(d_out, t_out)
    assert (d_w is None) == (t_w is None)
    if t_w is not None:
        close(d_w, t_w)
    check_grads(d_out, t_out, [x] + list(p.values()))


def test_encoder_decoder_key_is_value():
    q, kv = both(arr(L, N, E)), both(arr(S, N, E, seed=3))
    p = params()
    d_out, d_w = call(dynagrad, q[0], kv[0], kv[0], p, 0, average_attn_weights=False)
    t_out, t_w = call(torch, q[1], kv[1], kv[1], p, 1, average_attn_weights=False)
    close(d_out, t_out)
    close(d_w, t_w)
    check_grads(d_out, t_out, [q, kv] + list(p.values()))


@pytest.mark.parametrize('need_weights', [True, False])
def test_static_kv_zero_attn_and_kpm(need_weights):
    q, k, v = both(arr(L, N, E)), both(arr(S, N, E, seed=3)), both(arr(S, N, E, seed=4))
    sk, sv = both(arr(N * H, 5, E // H, seed=5)), both(arr(N * H, 5, E // H, seed=6))
    kpm = np.zeros((N, 5), bool)         # static keys' length; the zero column is added
    kpm[0, 2] = kpm[1, 4] = True
    p = params()
    kpms = (dynagrad.from_numpy(kpm), torch.from_numpy(kpm))
    kw = [dict(static_k=sk[side], static_v=sv[side], add_zero_attn=True,
               need_weights=need_weights, key_padding_mask=kpms[side]) for side in (0, 1)]
    d_out, _ = call(dynagrad, q[0], k[0], v[0], p, 0, **kw[0])
    t_out, _ = call(torch, q[1], k[1], v[1], p, 1, **kw[1])
    close(d_out, t_out)
    check_grads(d_out, t_out, [q, sk, sv] + list(p.values()))


def test_separate_weights_kdim_vdim_bias_kv_3d_mask():
    q, k, v = both(arr(L, N, E)), both(arr(S, N, 5, seed=3)), both(arr(S, N, 6, seed=4))
    mask = arr(N * H, L, S, seed=7)
    p = params(kv=True, separate=True)
    del p['in_proj_weight']
    d_out, d_w = call(dynagrad, q[0], k[0], v[0], p, 0, use_separate_proj_weight=True,
                      attn_mask=dynagrad.from_numpy(mask.copy()))
    t_out, t_w = call(torch, q[1], k[1], v[1], p, 1, use_separate_proj_weight=True,
                      attn_mask=torch.from_numpy(mask.copy()))
    close(d_out, t_out)
    close(d_w, t_w)
    check_grads(d_out, t_out, [q, k, v] + list(p.values()))


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('kdim', [None, 5])
def test_module_forward_is_the_function(batch_first, kdim):
    # the module hands its parameters to F.multi_head_attention_forward: same tensors out
    dynagrad.manual_seed(0)
    m = dynagrad.nn.MultiheadAttention(E, H, bias=True, add_bias_kv=True, kdim=kdim,
                                       vdim=kdim, batch_first=batch_first).double()
    q = dynagrad.from_numpy(arr(L, N, E))
    kv = dynagrad.from_numpy(arr(S, N, kdim or E, seed=2))
    out, w = m(*(t.transpose(0, 1) if batch_first else t for t in (q, kv, kv)))
    ref, ref_w = DF.multi_head_attention_forward(
        q, kv, kv, E, H, m.in_proj_weight, m.in_proj_bias, m.bias_k, m.bias_v, False, 0.0,
        m.out_proj.weight, m.out_proj.bias, use_separate_proj_weight=kdim is not None,
        q_proj_weight=m.q_proj_weight, k_proj_weight=m.k_proj_weight,
        v_proj_weight=m.v_proj_weight)
    np.testing.assert_array_equal((out.transpose(0, 1) if batch_first else out).detach().numpy(),
                                  ref.detach().numpy())
    np.testing.assert_array_equal(w.detach().numpy(), ref_w.detach().numpy())


def test_mismatched_mask_dtypes_warn_as_torch():
    x = both(arr(L, N, E), grad=False)
    p = params()
    kpm = np.zeros((N, L), bool)
    mask = np.zeros((L, L))
    for lib, side in ((torch, 1), (dynagrad, 0)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            call(lib, x[side], x[side], x[side], p, side,
                 key_padding_mask=lib.from_numpy(kpm), attn_mask=lib.from_numpy(mask))
        texts = [str(w.message) for w in caught]
        assert any('Support for mismatched key_padding_mask and attn_mask is deprecated' in t
                   for t in texts), (lib.__name__, texts)


def test_dropout_in_training_only():
    x = both(arr(L, N, E), grad=False)
    p = params()
    d_eval, _ = call(dynagrad, x[0], x[0], x[0], p, 0, dropout_p=0.9, training=False)
    t_eval, _ = call(torch, x[1], x[1], x[1], p, 1, dropout_p=0.9, training=False)
    close(d_eval, t_eval)
    d_train, w = call(dynagrad, x[0], x[0], x[0], p, 0, dropout_p=0.9,
                      average_attn_weights=False)
    assert not np.allclose(d_train.detach().numpy(), d_eval.detach().numpy())
    kept = w.detach().numpy()
    assert np.all((kept == 0) | (kept > 0))        # dropped weights are zeros, kept scaled up
    assert (kept == 0).mean() > 0.5


def _error_of(run):
    try:
        run()
    except Exception as e:  # noqa: BLE001 (the test compares what each library raises)
        return e
    raise AssertionError('no error raised')


@pytest.mark.parametrize('case', [
    'bias_k_only', 'bias_v_only', 'static_with_bias', 'static_v_bias', 'missing_q_weight',
    'separate_weight_shape', 'separate_bias_shape', 'kpm_batch', 'unbatched_3d_mask',
    'key_value_shape', 'separate_seq_mismatch'])
def test_errors_match_torch(case):
    def run(lib, side):
        x = both(arr(L, N, E), grad=False)[side]
        y = both(arr(S, N, E, seed=2), grad=False)[side]
        kw = {}
        p = params(kv=case in ('bias_k_only', 'bias_v_only', 'static_with_bias',
                               'static_v_bias'), separate=True)
        q, k, v = x, y, y
        if case == 'bias_k_only':
            p.pop('bias_v')
        elif case == 'bias_v_only':
            p.pop('bias_k')
        elif case == 'static_with_bias':
            kw['static_k'] = lib.from_numpy(arr(N * H, S, E // H))
        elif case == 'static_v_bias':
            kw['static_v'] = lib.from_numpy(arr(N * H, S, E // H))
        elif case == 'missing_q_weight':
            p.pop('q_proj_weight')
            kw['use_separate_proj_weight'] = True
        elif case == 'separate_weight_shape':       # k_proj_weight is (E, 5), keys are E wide
            kw['use_separate_proj_weight'] = True
        elif case == 'separate_bias_shape':
            p['k_proj_weight'] = both(arr(E, E))
            p['v_proj_weight'] = both(arr(E, E))
            p['in_proj_bias'] = both(arr(3 * E + 3))
            kw['use_separate_proj_weight'] = True
        elif case == 'kpm_batch':
            kw['key_padding_mask'] = lib.from_numpy(np.zeros((N + 1, S), bool))
        elif case == 'unbatched_3d_mask':
            q, k, v = x[:, 0], y[:, 0], y[:, 0]
            kw['attn_mask'] = lib.from_numpy(np.zeros((H, L, L)))
        elif case == 'key_value_shape':
            v = lib.from_numpy(arr(S + 1, N, E))
        elif case == 'separate_seq_mismatch':
            v = lib.from_numpy(arr(S + 1, N, E))
            kw['use_separate_proj_weight'] = True
        return lambda: call(lib, q, k, v, p, side, **kw)

    t_err = _error_of(run(torch, 1))
    d_err = _error_of(run(dynagrad, 0))
    assert type(d_err) is type(t_err), (d_err, t_err)
    assert str(d_err) == str(t_err).replace('torch.Size', 'dynagrad.Size') or \
        str(t_err) == str(d_err), (str(d_err), str(t_err))


# -- grouped_mm ---------------------------------------------------------------------------

CASES = [  # (mat_a shape, mat_b shape, offs)
    ((3, 8, 16), (3, 16, 8), None),
    ((24, 16), (3, 16, 8), [5, 9, 24]),
    ((8, 48), (48, 8), [16, 16, 48]),
    ((3, 8, 16), (16, 24), [8, 13, 24]),
]


def gmm_pair(shape, dt, seed):
    t = torch.from_numpy(arr(*shape, seed=seed).astype(np.float32)).to(getattr(torch, dt))
    d = dynagrad.from_numpy(t.float().numpy()).to(getattr(dynagrad, dt))
    return d.requires_grad_(), t.requires_grad_()


def gmm_close(d, t, dt):
    tol = dict(float32=1e-5, bfloat16=2e-2, float16=2e-3)[dt]
    np.testing.assert_allclose(d.detach().float().numpy(), t.detach().float().numpy(),
                               rtol=tol, atol=tol)


def offs_pair(offs):
    if offs is None:
        return None, None
    return dynagrad.tensor(offs, dtype=dynagrad.int32), torch.tensor(offs, dtype=torch.int32)


@pytest.mark.parametrize('dt', ['float32', 'bfloat16', 'float16'])
@pytest.mark.parametrize('sa,sb,offs', CASES)
def test_grouped_mm_values_and_grads(dt, sa, sb, offs):
    a, b = gmm_pair(sa, dt, 1), gmm_pair(sb, dt, 2)
    o = offs_pair(offs)
    d_out = DF.grouped_mm(a[0], b[0], offs=o[0])
    t_out = TF.grouped_mm(a[1], b[1], offs=o[1])
    assert d_out.dtype.name == dt and tuple(d_out.shape) == tuple(t_out.shape)
    assert type(d_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == 'GroupedMmBackward0'
    g = torch.from_numpy(arr(*t_out.shape, seed=3).astype(np.float32)).to(t_out.dtype)
    dg = dynagrad.from_numpy(g.float().numpy()).to(d_out.dtype)
    t_ga, t_gb = torch.autograd.grad(t_out, (a[1], b[1]), g)
    d_ga, d_gb = dynagrad.autograd.grad(d_out, (a[0], b[0]), dg)
    # PyTorch leaves rows/columns past offs[-1] uninitialised; compare the defined part
    # (all of it here: offs end at the full length)
    gmm_close(d_out, t_out, dt)
    gmm_close(d_ga, t_ga, dt)
    gmm_close(d_gb, t_gb, dt)
    assert d_ga.dtype.name == dt and d_gb.dtype.name == dt


def test_grouped_mm_past_last_offset_is_zero():
    a, b = gmm_pair((24, 16), 'float32', 1), gmm_pair((3, 16, 8), 'float32', 2)
    o = offs_pair([5, 9, 20])
    d_out = DF.grouped_mm(a[0], b[0], offs=o[0])
    t_out = TF.grouped_mm(a[1], b[1], offs=o[1])
    gmm_close(d_out[:20], t_out[:20], 'float32')
    assert not d_out[20:].detach().numpy().any()
    d_out.backward(dynagrad.ones(24, 8))
    assert not a[0].grad[20:].numpy().any()


@pytest.mark.parametrize('sa,sb,offs', CASES)
def test_grouped_mm_second_derivative(sa, sb, offs):
    a, b = gmm_pair(sa, 'float32', 1), gmm_pair(sb, 'float32', 2)
    o = offs_pair(offs)
    grads = []
    for lib, side, F in ((dynagrad, 0, DF), (torch, 1, TF)):
        out = F.grouped_mm(a[side], b[side], offs=o[side])
        g = lib.from_numpy(arr(*out.shape, seed=3).astype(np.float32)).requires_grad_()
        ga, gb = lib.autograd.grad(out, (a[side], b[side]), g, create_graph=True)
        w = lib.from_numpy(arr(*ga.shape, seed=4).astype(np.float32))
        # d/d(b, g) of <ga, w>: ga = grouped(g, b^T) is bilinear in g and b
        grads.append(lib.autograd.grad((ga * w).sum() + (gb * gb).sum(), (b[side], g)))
    for d, t in zip(*grads):
        gmm_close(d, t, 'float32')


@pytest.mark.parametrize('case,substring', [
    ('float64', 'Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double'),
    ('int_b', 'Expected mat_b to be Float32, BFloat16 or Float16 matrix, got Int'),
    ('1d', 'mat_a has to be 2 or 3d'),
    ('mixed', 'expected m1 and m2 to have the same dtype'),
    ('3d_offs', 'Have to provide offsets if there is a 2d matrix'),
    ('no_offs', 'Have to provide offsets if there is a 2d matrix'),
    ('offs_int64', 'Offsets have to be int32'),
    ('offs_2d', 'offs has to be 1D'),
    ('offs_count', 'matrix batch sizes have to match'),
    ('groups', 'batched dimension has to match'),
    ('contraction', 'contraction dimension of mat_a and mat_b must match'),
    ('bias', 'Bias not supported yet'),
    ('out_dtype', 'Grouped gemm output dtype must match `mat_a` dtype'),
])
def test_grouped_mm_errors(case, substring):
    def run(lib, F):
        a3 = lib.zeros(3, 8, 16)
        b3 = lib.zeros(3, 16, 8)
        a2 = lib.zeros(24, 16)
        i32 = lib.tensor([8, 16, 24], dtype=lib.int32)
        return {
            'float64': lambda: F.grouped_mm(a3.double(), b3.double()),
            'int_b': lambda: F.grouped_mm(a3, b3.int()),
            '1d': lambda: F.grouped_mm(lib.zeros(16), b3),
            'mixed': lambda: F.grouped_mm(a2, b3.bfloat16(), offs=i32),
            '3d_offs': lambda: F.grouped_mm(a3, b3, offs=i32),
            'no_offs': lambda: F.grouped_mm(a2, b3),
            'offs_int64': lambda: F.grouped_mm(a2, b3, offs=i32.long()),
            'offs_2d': lambda: F.grouped_mm(a2, b3, offs=i32.reshape(1, 3)),
            'offs_count': lambda: F.grouped_mm(a2, b3, offs=i32[:2]),
            'groups': lambda: F.grouped_mm(lib.zeros(2, 8, 16), b3),
            'contraction': lambda: F.grouped_mm(lib.zeros(3, 8, 8), b3),
            'bias': lambda: F.grouped_mm(a3, b3, bias=lib.zeros(3, 8)),
            'out_dtype': lambda: F.grouped_mm(a3.bfloat16(), b3.bfloat16(),
                                              out_dtype=lib.float32),
        }[case]
    for lib, F in ((torch, TF), (dynagrad, DF)):
        with pytest.raises(RuntimeError, match=substring.replace('(', r'\(')):
            run(lib, F)()


def test_grouped_mm_refuses_offsets_torch_leaves_undefined():
    # torch accepts decreasing or out-of-range offsets and returns uninitialised memory;
    # dynagrad refuses them before computing anything
    a, b = dynagrad.zeros(24, 16), dynagrad.zeros(3, 16, 8)
    for ends in ([16, 8, 24], [8, 16, 32]):
        with pytest.raises(RuntimeError, match='offs must be non-decreasing'):
            DF.grouped_mm(a, b, offs=dynagrad.tensor(ends, dtype=dynagrad.int32))
