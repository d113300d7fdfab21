"""MultiheadAttention and the Transformer layers against torch: with the same weights (copied
both ways through state dicts), outputs and gradients (inputs, parameters, float masks)
match; state dict keys, shapes and reprs match."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.nn.modules.attention import MultiheadAttention
from dynagrad.nn.modules.transformer import (Transformer, TransformerDecoder,
                                             TransformerDecoderLayer, TransformerEncoder,
                                             TransformerEncoderLayer)

pytestmark = pytest.mark.filterwarnings('ignore::UserWarning')

DG_CLASSES = {c.__name__: c for c in (MultiheadAttention, Transformer, TransformerDecoder,
                                      TransformerDecoderLayer, TransformerEncoder,
                                      TransformerEncoderLayer)}
TOL = 1e-10
E, H, L, S, N = 8, 2, 3, 4, 2


def rng(seed=0):
    return np.random.default_rng(seed)


def arr(*shape, seed=0):
    return rng(seed).standard_normal(shape)


def to_dg(a, grad=False):
    t = dynagrad.from_numpy(np.array(a))
    return t.requires_grad_() if grad else t


def to_th(a, grad=False):
    t = torch.from_numpy(np.array(a))
    return t.requires_grad_() if grad else t


def copy_state(src, dst, lib):
    convert = dynagrad.from_numpy if lib == 'dg' else torch.from_numpy
    sd = {k: convert(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
    result = dst.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys


def pair(name, args, kwargs, direction, train=False):
    """torch and dynagrad modules (float64) with the same weights."""
    t_mod = getattr(torch.nn, name)(*args, **kwargs).double()
    d_mod = DG_CLASSES[name](*args, **kwargs).double()
    tsd, dsd = t_mod.state_dict(), d_mod.state_dict()
    assert list(tsd) == list(dsd)
    assert [tuple(v.shape) for v in tsd.values()] == [tuple(v.shape) for v in dsd.values()]
    if direction == 'torch_to_dg':
        copy_state(t_mod, d_mod, 'dg')
    else:
        copy_state(d_mod, t_mod, 'torch')
    t_mod.train(train)
    d_mod.train(train)
    return t_mod, d_mod


def close(d, t, tol=TOL):
    assert d is not None and t is not None, (d, t)
    np.testing.assert_allclose(np.asarray(d.detach().numpy()), t.detach().numpy(),
                               rtol=tol, atol=tol)


def build(spec, lib):
    """Inputs from ``spec``: arrays (float ones require grad), or ``('same', i)`` for the
    very tensor of input ``i`` (self-attention, key is value)."""
    conv = to_dg if lib == 'dg' else to_th
    built = []
    for a in spec:
        if isinstance(a, tuple) and a[0] == 'same':
            built.append(built[a[1]])
        elif a is None or isinstance(a, (bool, int, float)):
            built.append(a)
        else:
            a = np.asarray(a)
            built.append(conv(a, grad=a.dtype.kind == 'f'))
    return built


def compare(t_mod, d_mod, args, kwargs=None, mask_grad=True):
    """Same outputs and gradients of a random linear functional of every output."""
    kwargs = kwargs or {}
    keys = list(kwargs)
    t_in = build(list(args) + [kwargs[k] for k in keys], 'torch')
    d_in = build(list(args) + [kwargs[k] for k in keys], 'dg')
    n = len(args)
    t_out = t_mod(*t_in[:n], **dict(zip(keys, t_in[n:])))
    d_out = d_mod(*d_in[:n], **dict(zip(keys, d_in[n:])))
    if not isinstance(t_out, tuple):
        t_out, d_out = (t_out,), (d_out,)
    assert len(t_out) == len(d_out)
    t_loss = d_loss = 0
    for i, (to, do) in enumerate(zip(t_out, d_out)):
        if to is None:
            assert do is None
            continue
        assert tuple(do.shape) == tuple(to.shape)
        close(do, to)
        w = arr(*to.shape, seed=10 + i)
        t_loss = t_loss + (to * to_th(w)).sum()
        d_loss = d_loss + (do * to_dg(w)).sum()
    t_loss.backward()
    d_loss.backward()
    seen = set()
    for ti, di in zip(t_in, d_in):
        if not hasattr(ti, 'requires_grad') or id(ti) in seen or not ti.requires_grad:
            continue
        seen.add(id(ti))
        if ti.grad is None:
            assert di.grad is None or not np.any(di.grad.numpy())
        elif mask_grad or ti.ndim > 1:
            close(di.grad, ti.grad)
    t_params = dict(t_mod.named_parameters())
    d_params = dict(d_mod.named_parameters())
    assert list(t_params) == list(d_params)
    for name, tp in t_params.items():
        dp = d_params[name]
        if tp.grad is None:
            assert dp.grad is None or not np.any(dp.grad.numpy()), name
        else:
            close(dp.grad, tp.grad)
    return t_out, d_out


def bool_mask(shape, seed=1, p=0.3):
    """A random boolean mask that never hides a whole row."""
    m = rng(seed).random(shape) < p
    m[..., 0] = False
    return m


def causal_bool(n, m=None):
    return np.triu(np.ones((n, m or n), dtype=bool), 1)


def causal_float(n):
    return np.where(causal_bool(n), -np.inf, 0.0)


# --- MultiheadAttention ----------------------------------------------------------------------

def q_in(batch_first, length=L, dim=E, seed=0):
    return arr(N, length, dim, seed=seed) if batch_first else arr(length, N, dim, seed=seed)


def kpm(length=S, seed=2):
    return bool_mask((N, length), seed=seed, p=0.4)


# name -> (constructor kwargs, inputs builder(batch_first) -> (args, forward kwargs))
MHA_CASES = {
    'self_attention': ({}, lambda bf: ([q_in(bf, S), ('same', 0), ('same', 0)], {})),
    'cross_key_is_value': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)], {})),
    'separate_qkv': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), q_in(bf, S, seed=2)], {})),
    'no_bias': (dict(bias=False), lambda bf: ([q_in(bf), q_in(bf, S, seed=1),
                                              q_in(bf, S, seed=2)], {})),
    'kdim_vdim': (dict(kdim=3, vdim=5), lambda bf: (
        [q_in(bf), q_in(bf, S, 3, seed=1), q_in(bf, S, 5, seed=2)], {})),
    'kdim_vdim_masks': (dict(kdim=3, vdim=5), lambda bf: (
        [q_in(bf), q_in(bf, S, 3, seed=1), q_in(bf, S, 5, seed=2)],
        dict(key_padding_mask=kpm(), attn_mask=bool_mask((L, S))))),
    'causal_bool_mask': ({}, lambda bf: ([q_in(bf), ('same', 0), ('same', 0)],
                                         dict(attn_mask=causal_bool(L)))),
    'causal_float_mask_is_causal': ({}, lambda bf: (
        [q_in(bf), ('same', 0), ('same', 0)],
        dict(attn_mask=causal_float(L), is_causal=True))),
    'float_mask_2d': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
                                      dict(attn_mask=arr(L, S, seed=3)))),
    'float_mask_3d': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
                                      dict(attn_mask=arr(N * H, L, S, seed=3)))),
    'bool_mask_3d': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
                                     dict(attn_mask=bool_mask((N * H, L, S))))),
    'key_padding_bool': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
                                         dict(key_padding_mask=kpm()))),
    'key_padding_float': ({}, lambda bf: ([q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
                                          dict(key_padding_mask=arr(N, S, seed=4)))),
    'key_padding_and_causal': ({}, lambda bf: (
        [q_in(bf, S), ('same', 0), ('same', 0)],
        dict(key_padding_mask=kpm(), attn_mask=causal_bool(S), is_causal=True))),
    'add_bias_kv': (dict(add_bias_kv=True), lambda bf: (
        [q_in(bf), q_in(bf, S, seed=1), ('same', 1)],
        dict(key_padding_mask=kpm(), attn_mask=arr(L, S, seed=3)))),
    'add_zero_attn': (dict(add_zero_attn=True), lambda bf: (
        [q_in(bf), q_in(bf, S, seed=1), q_in(bf, S, seed=2)],
        dict(key_padding_mask=kpm(), attn_mask=bool_mask((N * H, L, S))))),
    'bias_kv_and_zero_attn': (dict(add_bias_kv=True, add_zero_attn=True), lambda bf: (
        [q_in(bf), ('same', 0), ('same', 0)], dict(attn_mask=causal_bool(L)))),
    'four_heads': (dict(num_heads=4), lambda bf: ([q_in(bf), ('same', 0), ('same', 0)],
                                                  dict(key_padding_mask=kpm(L)))),
}


@pytest.mark.parametrize('case', list(MHA_CASES))
@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('need_weights,average', [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize('direction', ['torch_to_dg', 'dg_to_torch'])
def test_mha_matches_torch(case, batch_first, need_weights, average, direction):
    ctor, make = MHA_CASES[case]
    ctor = dict(ctor)
    heads = ctor.pop('num_heads', H)
    t_mod, d_mod = pair('MultiheadAttention', (E, heads),
                        dict(ctor, batch_first=batch_first), direction, train=True)
    args, kwargs = make(batch_first)
    kwargs = dict(kwargs, need_weights=need_weights, average_attn_weights=average)
    t_out, d_out = compare(t_mod, d_mod, args, kwargs)
    assert (d_out[1] is None) == (not need_weights)


@pytest.mark.parametrize('need_weights', [True, False])
@pytest.mark.parametrize('masks', ['none', 'kpm', 'mask_2d', 'mask_3d'])
def test_mha_unbatched(need_weights, masks):
    t_mod, d_mod = pair('MultiheadAttention', (E, H), dict(kdim=3, vdim=5), 'torch_to_dg')
    kwargs = {'none': {}, 'kpm': dict(key_padding_mask=bool_mask((S,), p=0.5)),
              'mask_2d': dict(attn_mask=bool_mask((L, S))),
              'mask_3d': dict(attn_mask=arr(H, L, S, seed=5))}[masks]
    compare(t_mod, d_mod, [arr(L, E), arr(S, 3, seed=1), arr(S, 5, seed=2)],
            dict(kwargs, need_weights=need_weights, average_attn_weights=False))


def test_mha_eval_mode_turns_dropout_off():
    t_mod, d_mod = pair('MultiheadAttention', (E, H), dict(dropout=0.5), 'torch_to_dg')
    compare(t_mod, d_mod, [q_in(False), ('same', 0), ('same', 0)], dict(need_weights=True))
    compare(t_mod, d_mod, [q_in(False), ('same', 0), ('same', 0)], dict(need_weights=False))


def test_mha_dropout_in_training_drops_weights():
    dynagrad.manual_seed(0)
    m = MultiheadAttention(E, H, dropout=0.5).double()
    x = to_dg(q_in(False))
    out, w = m(x, x, x, average_attn_weights=False)
    assert tuple(out.shape) == (L, N, E)
    assert np.any(w.detach().numpy() == 0)
    out2, _ = m(x, x, x, need_weights=False)
    assert tuple(out2.shape) == (L, N, E)


def test_mha_float32():
    t_mod = torch.nn.MultiheadAttention(E, H)
    d_mod = MultiheadAttention(E, H)
    copy_state(t_mod, d_mod, 'dg')
    x = q_in(False).astype(np.float32)
    for nw in (True, False):
        to, tw = t_mod(to_th(x), to_th(x), to_th(x), need_weights=nw)
        do, dw = d_mod(to_dg(x), to_dg(x), to_dg(x), need_weights=nw)
        assert do.dtype == dynagrad.float32
        close(do, to, 1e-5)


def test_mha_init_and_attributes():
    m = MultiheadAttention(E, H, add_bias_kv=True)
    assert m.head_dim == E // H and m._qkv_same_embed_dim and m.batch_first is False
    assert m.q_proj_weight is None and m.in_proj_weight.shape == (3 * E, E)
    w = m.in_proj_weight.detach().numpy()
    bound = np.sqrt(6 / (E + 3 * E))
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2
    assert not np.any(m.in_proj_bias.detach().numpy())
    assert not np.any(m.out_proj.bias.detach().numpy())
    assert np.any(m.bias_k.detach().numpy()) and m.bias_k.shape == (1, 1, E)
    assert np.any(m.out_proj.weight.detach().numpy())
    m2 = MultiheadAttention(E, H, kdim=3)
    assert m2.in_proj_weight is None and m2.k_proj_weight.shape == (E, 3)
    assert m2.v_proj_weight.shape == (E, E)
    assert type(m.out_proj).__name__ == 'NonDynamicallyQuantizableLinear'
    assert isinstance(m.out_proj, dynagrad.nn.Linear)


@pytest.mark.parametrize('kwargs', [{}, dict(bias=False, kdim=3, vdim=5, add_bias_kv=True)])
def test_mha_repr(kwargs):
    t = torch.nn.MultiheadAttention(E, H, **kwargs)
    d = MultiheadAttention(E, H, **kwargs)
    assert repr(d) == repr(t)


def test_mha_errors():
    with pytest.raises(AssertionError, match='embed_dim must be divisible by num_heads'):
        MultiheadAttention(7, 2)
    m = MultiheadAttention(E, H).double()
    x = to_dg(q_in(False))
    with pytest.raises(RuntimeError, match='The shape of the 2D attn_mask is'):
        m(x, x, x, attn_mask=to_dg(np.zeros((4, 3), dtype=bool)))
    with pytest.raises(RuntimeError, match='The shape of the 3D attn_mask is'):
        m(x, x, x, attn_mask=to_dg(np.zeros((5, 3, 3))))
    with pytest.raises(RuntimeError, match='Need attn_mask if specifying the is_causal hint'):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match='only bool and floating types of attn_mask'):
        m(x, x, x, attn_mask=to_dg(np.zeros((3, 3), dtype=np.int64)))
    with pytest.raises(AssertionError, match='expected `key` and `value` to be 2-D'):
        m(x[0], x, x)
    with pytest.raises(AssertionError):
        m(x, x, x, key_padding_mask=to_dg(np.zeros((2, 4), dtype=bool)))


def test_mha_gradcheck():
    m = MultiheadAttention(4, 2, add_bias_kv=True).double()
    params = list(m.parameters())
    q = to_dg(arr(3, 2, 4), grad=True)
    kv = to_dg(arr(2, 2, 4, seed=1), grad=True)
    mask = to_dg(arr(3, 2, seed=2), grad=True)

    def f(q, kv, mask, *ps):
        return m(q, kv, kv, attn_mask=mask, average_attn_weights=False)

    def g(q, kv, mask, *ps):
        return m(q, kv, kv, attn_mask=mask, need_weights=False)[0]

    assert dynagrad.autograd.gradcheck(f, (q, kv, mask, *params))
    assert dynagrad.autograd.gradcheck(g, (q, kv, mask, *params))


# --- Transformer layers -----------------------------------------------------------------------

D, FF = 8, 16


def seq(batch_first, length, seed=0, unbatched=False):
    if unbatched:
        return arr(length, D, seed=seed)
    return arr(N, length, D, seed=seed) if batch_first else arr(length, N, D, seed=seed)


ENC_MASKS = {
    'none': lambda n: {},
    'causal_bool': lambda n: dict(src_mask=causal_bool(n), is_causal=True),
    'causal_float': lambda n: dict(src_mask=causal_float(n)),
    'float_and_padding': lambda n: dict(src_mask=arr(n, n, seed=3),
                                        src_key_padding_mask=bool_mask((N, n), p=0.4)),
    'padding_float': lambda n: dict(src_key_padding_mask=np.where(bool_mask((N, n)), -1e9,
                                                                  0.0)),
}


def layer_kwargs(batch_first, norm_first, train, activation='relu'):
    return dict(dim_feedforward=FF, dropout=0.0 if train else 0.3, batch_first=batch_first,
                norm_first=norm_first, activation=activation)


@pytest.mark.parametrize('masks', list(ENC_MASKS))
@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('norm_first', [False, True])
@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('direction', ['torch_to_dg', 'dg_to_torch'])
def test_encoder_layer(masks, batch_first, norm_first, train, direction):
    t_mod, d_mod = pair('TransformerEncoderLayer', (D, H),
                        layer_kwargs(batch_first, norm_first, train), direction, train)
    compare(t_mod, d_mod, [seq(batch_first, L)], ENC_MASKS[masks](L))


@pytest.mark.parametrize('activation', ['gelu', 'callable', 'module'])
def test_encoder_layer_activation(activation):
    act = {'gelu': ('gelu', 'gelu'),
           'callable': (torch.nn.functional.silu, dynagrad.nn.functional.silu),
           'module': (torch.nn.Tanh(), dynagrad.nn.Tanh())}[activation]
    kw = dict(dim_feedforward=FF, dropout=0.0)
    t_mod = torch.nn.TransformerEncoderLayer(D, H, activation=act[0], **kw).double()
    d_mod = TransformerEncoderLayer(D, H, activation=act[1], **kw).double()
    copy_state(t_mod, d_mod, 'dg')
    assert repr(d_mod).replace('dynagrad.', 'torch.') == repr(t_mod)
    compare(t_mod, d_mod, [seq(False, L)])


def test_encoder_layer_unbatched():
    t_mod, d_mod = pair('TransformerEncoderLayer', (D, H), layer_kwargs(True, False, False),
                        'torch_to_dg')
    compare(t_mod, d_mod, [seq(True, L, unbatched=True)],
            dict(src_mask=causal_bool(L), src_key_padding_mask=bool_mask((L,), p=0.5)))


DEC_MASKS = {
    'none': lambda: {},
    'causal': lambda: dict(tgt_mask=causal_float(L), tgt_is_causal=True),
    'all': lambda: dict(tgt_mask=causal_bool(L), memory_mask=arr(L, S, seed=6),
                        tgt_key_padding_mask=bool_mask((N, L), seed=7),
                        memory_key_padding_mask=bool_mask((N, S), seed=8, p=0.5)),
}


@pytest.mark.parametrize('masks', list(DEC_MASKS))
@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('norm_first', [False, True])
@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('direction', ['torch_to_dg', 'dg_to_torch'])
def test_decoder_layer(masks, batch_first, norm_first, train, direction):
    t_mod, d_mod = pair('TransformerDecoderLayer', (D, H),
                        layer_kwargs(batch_first, norm_first, train, 'gelu'), direction, train)
    compare(t_mod, d_mod, [seq(batch_first, L), seq(batch_first, S, seed=1)], DEC_MASKS[masks]())


def test_decoder_layer_unbatched():
    t_mod, d_mod = pair('TransformerDecoderLayer', (D, H), layer_kwargs(False, True, False),
                        'torch_to_dg')
    compare(t_mod, d_mod, [seq(False, L, unbatched=True), seq(False, S, 1, unbatched=True)],
            dict(tgt_mask=causal_bool(L), memory_key_padding_mask=bool_mask((S,), p=0.5)))


def _stack(kind, batch_first, norm_first, train, lib, norm=True):
    nn = torch.nn if lib == 'torch' else dynagrad.nn
    layer_cls = {'torch': getattr(torch.nn, f'Transformer{kind}Layer'),
                 'dg': DG_CLASSES[f'Transformer{kind}Layer']}[lib]
    stack_cls = {'torch': getattr(torch.nn, f'Transformer{kind}'),
                 'dg': DG_CLASSES[f'Transformer{kind}']}[lib]
    layer = layer_cls(D, H, **layer_kwargs(batch_first, norm_first, train))
    extra = {'enable_nested_tensor': False} if kind == 'Encoder' else {}
    return stack_cls(layer, 2, norm=nn.LayerNorm(D) if norm else None, **extra).double()


@pytest.mark.parametrize('kind', ['Encoder', 'Decoder'])
@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('norm_first', [False, True])
@pytest.mark.parametrize('train', [False, True])
@pytest.mark.parametrize('direction', ['torch_to_dg', 'dg_to_torch'])
def test_stacks(kind, batch_first, norm_first, train, direction):
    t_mod = _stack(kind, batch_first, norm_first, train, 'torch')
    d_mod = _stack(kind, batch_first, norm_first, train, 'dg')
    assert list(t_mod.state_dict()) == list(d_mod.state_dict())
    assert repr(d_mod).replace('dynagrad.', 'torch.') == repr(t_mod)
    if direction == 'torch_to_dg':
        copy_state(t_mod, d_mod, 'dg')
    else:
        copy_state(d_mod, t_mod, 'torch')
    t_mod.train(train)
    d_mod.train(train)
    if kind == 'Encoder':
        compare(t_mod, d_mod, [seq(batch_first, S)],
                dict(mask=causal_float(S), src_key_padding_mask=bool_mask((N, S), p=0.4)))
        compare(t_mod, d_mod, [seq(batch_first, S, seed=3)], dict(mask=causal_bool(S)))
    else:
        compare(t_mod, d_mod, [seq(batch_first, L), seq(batch_first, S, seed=1)],
                dict(tgt_mask=causal_float(L), memory_key_padding_mask=bool_mask((N, S))))


def test_layers_are_independent_copies():
    layer = TransformerEncoderLayer(D, H, FF)
    enc = TransformerEncoder(layer, 3)
    ws = [m.linear1.weight for m in enc.layers]
    assert len({id(w) for w in ws}) == 3 and all(w is not layer.linear1.weight for w in ws)
    np.testing.assert_array_equal(ws[0].detach().numpy(), ws[2].detach().numpy())
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters()))


@pytest.mark.parametrize('batch_first', [False, True])
@pytest.mark.parametrize('direction', ['torch_to_dg', 'dg_to_torch'])
def test_transformer(batch_first, direction):
    args = (D, H, 2, 1, FF)
    kwargs = dict(batch_first=batch_first, dropout=0.0)
    t_mod, d_mod = pair('Transformer', args, kwargs, direction, train=True)
    assert repr(d_mod).replace('dynagrad.', 'torch.') == repr(t_mod)
    tgt_mask = Transformer.generate_square_subsequent_mask(L).double().numpy()
    np.testing.assert_array_equal(
        tgt_mask, torch.nn.Transformer.generate_square_subsequent_mask(L).double().numpy())
    compare(t_mod, d_mod, [seq(batch_first, S), seq(batch_first, L, seed=1)],
            dict(tgt_mask=tgt_mask, src_key_padding_mask=bool_mask((N, S), p=0.4),
                 memory_key_padding_mask=bool_mask((N, S), p=0.4)))


def test_transformer_init_is_xavier():
    m = Transformer(D, H, 1, 1, FF)
    for name, p in m.named_parameters():
        if p.ndim > 1:
            fan_out, fan_in = p.shape
            assert np.abs(p.detach().numpy()).max() <= np.sqrt(6 / (fan_in + fan_out)), name


def test_transformer_layer_reprs_and_keys():
    for name, args in [('TransformerEncoderLayer', (D, H, FF)),
                       ('TransformerDecoderLayer', (D, H, FF))]:
        for kwargs in [{}, dict(bias=False, layer_norm_eps=1e-6, dropout=0.2)]:
            t = getattr(torch.nn, name)(*args, **kwargs)
            d = DG_CLASSES[name](*args, **kwargs)
            assert repr(d).replace('dynagrad.', 'torch.') == repr(t)
            assert list(d.state_dict()) == list(t.state_dict())


def test_activation_error():
    with pytest.raises(RuntimeError, match='activation should be relu/gelu, not tanh'):
        TransformerEncoderLayer(D, H, activation='tanh')
