"""The gradient a custom autograd.Function's backward returns, fitted to its input as torch
fits it: summed down when the input broadcasts to it, refused (with torch's message) when
not; a complex gradient for a real input refused."""
import pytest
import torch

import dynagrad as dg


def _run(lib, grad_shape, grad_dtype='float32'):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            n = lib.Size(grad_shape).numel()
            return (lib.arange(float(n)) + 1).reshape(grad_shape).to(getattr(lib, grad_dtype))

    x = lib.ones(2, 3, requires_grad=True)
    try:
        Scale.apply(x).sum().backward()
    except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
        return type(e), str(e)
    return 'ok', str(x.grad.dtype).split('.')[1], list(x.grad.shape), x.grad.tolist()


@pytest.mark.parametrize('shape', [(2, 3), (1, 2, 3), (2, 2, 3), (5, 1, 2, 3), (4, 1, 1),
                                   (1, 3), (3,), (), (2, 1), (1, 1, 3), (4, 3), (2,), (3, 2),
                                   (6,), (2, 3, 1)], ids=str)
def test_gradient_shape_matches_torch(shape):
    t, d = _run(torch, shape), _run(dg, shape)
    if t[0] == 'ok':
        assert d == t
    else:
        assert d[0] is t[0] is RuntimeError
        assert d[1] == t[1].replace('torch', 'dynagrad'), (t, d)


@pytest.mark.parametrize('dtype', ['float64', 'float16', 'int64', 'complex64'])
def test_gradient_dtype_matches_torch(dtype):
    t, d = _run(torch, (2, 3), dtype), _run(dg, (2, 3), dtype)
    assert d[0] is t[0] or d == t
    if t[0] != 'ok':
        assert 'input_is_complex == grad_is_complex' in t[1] and \
            'input_is_complex == grad_is_complex' in d[1]


def test_summed_gradient_records_under_create_graph():
    def run(lib):
        class Expand(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return (x * x * g).expand(4, 2, 3)

        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        gx, = lib.autograd.grad(Expand.apply(x).sum(), x, create_graph=True)
        assert gx.requires_grad
        gx.sum().backward()
        return gx.tolist(), x.grad.tolist()
    assert run(dg) == run(torch)
