"""Activation checkpointing: identical gradients, far fewer saved bytes; saved-tensor hooks."""
import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad.autograd.graph import saved_tensors_hooks, disable_saved_tensors_hooks
from dynagrad.utils.checkpoint import checkpoint, checkpoint_sequential


def deep_mlp(lib, depth=16, width=64):
    lib.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [lib.nn.Linear(width, width), lib.nn.Tanh()]
    return lib.nn.Sequential(*layers).double()


def saved_bytes(run):
    """Bytes of every tensor saved for backward while ``run()`` builds its graph."""
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t
    with saved_tensors_hooks(pack, lambda t: t):
        out = run()
    return out, total[0]


def test_checkpoint_saves_memory_and_gives_identical_gradients():
    model = deep_mlp(dg)
    x = dg.randn(32, 64, dtype=dg.float64, requires_grad=True)

    plain, plain_bytes = saved_bytes(lambda: model(x).pow(2).sum())
    plain.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.zero_grad()
    x.grad = None

    blocks = list(model.children())
    segments = [dg.nn.Sequential(*blocks[i:i + 8]) for i in range(0, len(blocks), 8)]

    def run():
        h = x
        for seg in segments:
            h = checkpoint(seg, h, use_reentrant=True)
        return h.pow(2).sum()
    ckpt, ckpt_bytes = saved_bytes(run)
    ckpt.backward()
    assert ckpt.item() == plain.item()
    for g, p in zip(grads, list(model.parameters()) + [x]):
        np.testing.assert_array_equal(p.grad.numpy(), g)
    # 32 layers' activations and weights against the inputs of 4 segments.
    assert ckpt_bytes < plain_bytes / 5, (ckpt_bytes, plain_bytes)


def test_checkpoint_matches_torch_with_dropout_replayed():
    for lib in (dg, torch):
        lib.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((8, 16))
    dx = dg.tensor(x, requires_grad=True)
    w = dg.tensor(np.random.default_rng(1).standard_normal((16, 16)), requires_grad=True)

    def f(a):
        return dg.nn.functional.dropout(a @ w, 0.5, training=True).tanh()
    dg.manual_seed(3)
    out = checkpoint(f, dx, use_reentrant=True)
    out.sum().backward()
    g_ckpt = dx.grad.numpy().copy(), w.grad.numpy().copy()
    dx.grad = w.grad = None
    dg.manual_seed(3)
    f(dx).sum().backward()  # same seed, no checkpoint: the masks must agree
    np.testing.assert_array_equal(dx.grad.numpy(), g_ckpt[0])
    np.testing.assert_array_equal(w.grad.numpy(), g_ckpt[1])


def test_checkpoint_sequential_and_non_tensor_arguments():
    model = deep_mlp(dg, depth=4, width=8)
    x = dg.randn(3, 8, dtype=dg.float64, requires_grad=True)
    checkpoint_sequential(model, 2, x).sum().backward()
    g = x.grad.numpy().copy()
    x.grad = None
    model(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), g)

    y = dg.randn(4, dtype=dg.float64, requires_grad=True)
    out = checkpoint(lambda a, scale, shift=0.0: a * scale + shift, y, 3.0, shift=1.0)
    out.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [3.0] * 4)
    with pytest.warns(UserWarning, match='None of the inputs have requires_grad=True'):
        checkpoint(lambda a: a * 2, dg.ones(2))


def test_saved_tensors_hooks_match_torch_order_and_values():
    logs = {}
    for lib, hooks in ((dg, saved_tensors_hooks), (torch, torch.autograd.graph.saved_tensors_hooks)):
        log = logs[lib.__name__] = []

        def pack(t, log=log):
            log.append(('pack', tuple(t.shape)))
            return t.detach().numpy().copy()

        def unpack(a, log=log, lib=lib):
            log.append('unpack')
            return lib.tensor(a)
        x = lib.tensor([0.5, 1.0, 1.5], dtype=lib.float64, requires_grad=True)
        with hooks(pack, unpack):
            z = (x.exp() * x).tanh().sum()
        z.backward()
        log.append(np.round(x.grad.numpy(), 12).tolist())
    assert logs['dynagrad'] == logs['torch']


def test_hooked_saved_tensors_support_double_backward_and_skip_version_checks():
    x = dg.tensor([1.0, 2.0], dtype=dg.float64, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        y = (x ** 3).sum()
        w = x * 1
        v = w * w
    (g,) = dg.autograd.grad(y, x, create_graph=True)
    (gg,) = dg.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])
    w.add_(1)  # the hooks' copies are what backward reads, so this is not an error
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_disable_saved_tensors_hooks():
    x = dg.ones(2, requires_grad=True)
    with disable_saved_tensors_hooks('saving is not allowed here'):
        x + 1  # saves nothing: fine
        with pytest.raises(RuntimeError, match='saving is not allowed here'):
            x.exp()
