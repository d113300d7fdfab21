"""Convolutions beyond the op table: gradcheck/gradgradcheck on samples larger than the table's
12/8-element limit, second derivatives compared with torch's, and layout details."""
import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck

# padding='same' with an even kernel warns in both libraries, as it should; here on purpose
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")

DF = dynagrad.nn.functional
TF = torch.nn.functional

# (name, input shape, weight shape, bias size or None, kwargs)
CASES = [
    ('conv1d', (2, 4, 7), (6, 2, 3), 6, dict(stride=2, padding=1, dilation=2, groups=2)),
    ('conv1d', (1, 2, 6), (3, 2, 4), None, dict(padding='same')),
    ('conv2d', (2, 2, 5, 4), (3, 2, 3, 2), 3, dict(stride=(2, 1), padding=(1, 0))),
    ('conv2d', (1, 4, 5, 5), (4, 1, 3, 3), 4, dict(groups=4, padding='same', dilation=2)),
    ('conv2d', (1, 2, 4, 5), (2, 2, 2, 2), None, dict(padding='same')),
    ('conv3d', (1, 2, 3, 4, 3), (2, 1, 2, 2, 2), 2, dict(stride=(1, 2, 1), groups=2, padding=1)),
    ('conv_transpose1d', (2, 2, 4), (2, 3, 3), 3, dict(stride=2, padding=1, output_padding=1)),
    ('conv_transpose1d', (1, 2, 4), (2, 1, 2), None, dict(dilation=3, output_padding=2)),
    ('conv_transpose2d', (1, 4, 3, 2), (4, 1, 2, 3), 2, dict(stride=(2, 3), groups=2,
                                                             output_padding=(1, 2))),
    ('conv_transpose3d', (1, 2, 2, 2, 2), (2, 2, 2, 1, 2), 2, dict(stride=2, padding=(1, 0, 0))),
]


def _make(case, seed=0):
    name, xs, ws, bn, kw = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(xs), rng.standard_normal(ws)]
    if bn:
        arrays.append(rng.standard_normal(bn))
    return name, arrays, kw


def _ids(case):
    return f'{case[0]}-{"-".join(f"{k}={v}" for k, v in case[4].items())}'


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_gradcheck_and_gradgradcheck(case):
    name, arrays, kw = _make(case)
    leaves = [dynagrad.tensor(a, requires_grad=True) for a in arrays]
    f = lambda *ts: getattr(DF, name)(*ts, **kw)  # noqa: E731
    assert gradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize('case', CASES, ids=_ids)
def test_double_backward_matches_torch(case):
    """d/d(inputs) of <grad(y), v> for all inputs, compared with torch's values."""
    name, arrays, kw = _make(case, seed=1)
    out = {}
    for lib, F in ((dynagrad, DF), (torch, TF)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = getattr(F, name)(*ts, **kw)
        rng = np.random.default_rng(2)
        gy = lib.tensor(rng.standard_normal(tuple(y.shape)), requires_grad=True)
        grads = lib.autograd.grad(y, ts, gy, create_graph=True)
        vs = [lib.tensor(rng.standard_normal(tuple(g.shape))) for g in grads]
        total = sum((g * v).sum() for g, v in zip(grads, vs))
        second = lib.autograd.grad(total, ts[:2] + [gy], allow_unused=True)
        out[lib.__name__] = [g.detach().numpy() if g is not None else None for g in second]
    for d, t in zip(out['dynagrad'], out['torch']):
        if t is None:
            assert d is None or not np.any(d)
        else:
            np.testing.assert_allclose(d, t, rtol=1e-9, atol=1e-10)


def test_fold_unfold_round_trip_matches_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 7, 6))
    kw = dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    d = DF.fold(DF.unfold(dynagrad.tensor(x), **kw), (7, 6), **kw)
    t = TF.fold(TF.unfold(torch.tensor(x), **kw), (7, 6), **kw)
    np.testing.assert_allclose(d.numpy(), t.numpy(), rtol=1e-12)


def test_unfold_fold_gradgradcheck_larger():
    rng = np.random.default_rng(4)
    x = dynagrad.tensor(rng.standard_normal((1, 2, 4, 3)), requires_grad=True)
    kw = dict(kernel_size=2, padding=1, stride=(1, 2))
    assert gradgradcheck(lambda t: DF.unfold(t, **kw) ** 2, [x])
    c = dynagrad.tensor(rng.standard_normal((1, 8, 6)), requires_grad=True)
    assert gradgradcheck(lambda t: DF.fold(t, (3, 4), 2) ** 2, [c])


def test_conv_output_is_contiguous_and_owns_its_data():
    """Users call .view() on conv outputs, as in torch (which returns contiguous tensors)."""
    x = dynagrad.randn(2, 3, 6, 5)
    for y in (DF.conv2d(x, dynagrad.randn(4, 3, 3, 3), padding=1),
              DF.conv2d(x, dynagrad.randn(4, 3, 1, 1)),
              DF.conv_transpose2d(x, dynagrad.randn(3, 2, 3, 3), stride=2, padding=1),
              DF.unfold(x, 1)):
        assert y.is_contiguous()
        y.view(-1)
    u = DF.unfold(x, 1)  # a 1x1 unfold must not alias its input
    u.add_(1.0)
    assert not np.shares_memory(u.numpy(), x.numpy())


def test_inplace_change_of_saved_input_raises():
    x = dynagrad.randn(1, 2, 4, 4, requires_grad=True)
    w = dynagrad.randn(3, 2, 3, 3, requires_grad=True)
    h = x * 1
    y = DF.conv2d(h, w)
    h.add_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        y.sum().backward()


def test_no_weight_grad_work_when_weight_frozen():
    """Only what backward needs is saved: a frozen weight keeps no columns."""
    x = dynagrad.randn(2, 3, 5, 5, requires_grad=True)
    w = dynagrad.randn(4, 3, 3, 3)
    y = DF.conv2d(x, w)
    assert y.grad_fn._cols is None
    y.sum().backward()
    t = torch.nn.functional.conv2d(torch.tensor(x.detach().numpy(), requires_grad=True),
                                   torch.tensor(w.numpy()))
    assert y.grad_fn.name() == t.grad_fn.name() == 'ConvolutionBackward0'


def test_bilinear_double_backward_matches_torch():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((3, 2), (3, 4), (5, 2, 4), (5,))]
    res = {}
    for lib in (dynagrad, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = lib.nn.functional.bilinear(*ts)
        g = lib.autograd.grad((y ** 2).sum(), ts, create_graph=True)
        h = lib.autograd.grad(sum((gi ** 2).sum() for gi in g), ts[:3])
        res[lib.__name__] = [v.detach().numpy() for v in h]
    for d, t in zip(res['dynagrad'], res['torch']):
        np.testing.assert_allclose(d, t, rtol=1e-9)


@pytest.mark.parametrize('shape', [(1, 3, 8, 8), (2, 1, 8, 8), (1, 1, 6, 7)])
def test_two_convolutions_of_one_input_sum_their_gradients(shape):
    # one image (or one channel) and no padding: the input gradient used to alias a scratch
    # buffer, so the second convolution's backward overwrote the first's before the sum
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    w1, w2 = (rng.standard_normal((4, shape[1], 3, 3)).astype(np.float32) for _ in range(2))
    grads = []
    for lib in (dynagrad, torch):
        xt = lib.tensor(x, requires_grad=True)
        conv = lib.nn.functional.conv2d
        (conv(xt, lib.tensor(w1)) * conv(xt, lib.tensor(w2))).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-4, atol=1e-4)
