"""Complex parameters: modules built with a complex dtype initialise as torch's do (uniform_
and normal_ on a complex tensor draw its real view, normal_ with std / sqrt(2) per part),
bit for bit under the same seed; the init functions torch refuses on complex tensors
refuse them too."""
import pytest
import torch

import dynagrad as dg


MODULES = {
    'Linear': lambda nn, d: nn.Linear(3, 4, dtype=d),
    'Conv1d': lambda nn, d: nn.Conv1d(2, 3, 3, dtype=d),
    'Conv2d': lambda nn, d: nn.Conv2d(2, 3, 3, dtype=d),
    'ConvTranspose2d': lambda nn, d: nn.ConvTranspose2d(2, 3, 3, dtype=d),
    'Bilinear': lambda nn, d: nn.Bilinear(2, 3, 4, dtype=d),
    'Embedding': lambda nn, d: nn.Embedding(5, 3, dtype=d),
    'LayerNorm': lambda nn, d: nn.LayerNorm(3, dtype=d),
    'RNN': lambda nn, d: nn.RNN(3, 4, dtype=d),
    'MultiheadAttention': lambda nn, d: nn.MultiheadAttention(4, 2, dtype=d),
}


def _params(lib, name, dtype):
    lib.manual_seed(0)
    m = MODULES[name](lib.nn, getattr(lib, dtype))
    return [(n, str(p.dtype).split('.')[1], tuple(p.shape), p.detach().tolist())
            for n, p in m.named_parameters()]


@pytest.mark.parametrize('dtype', ['complex64', 'complex128'])
@pytest.mark.parametrize('name', list(MODULES))
def test_complex_module_parameters_match_torch(name, dtype):
    assert _params(dg, name, dtype) == _params(torch, name, dtype)


INITS = {
    'uniform_': lambda init, t: init.uniform_(t, -0.5, 2.0),
    'normal_': lambda init, t: init.normal_(t, 1.0, 3.0),
    'kaiming_uniform_': lambda init, t: init.kaiming_uniform_(t, a=5 ** 0.5),
    'kaiming_normal_': lambda init, t: init.kaiming_normal_(t),
    'xavier_uniform_': lambda init, t: init.xavier_uniform_(t),
    'xavier_normal_': lambda init, t: init.xavier_normal_(t),
    'sparse_': lambda init, t: init.sparse_(t, 0.5),
    'trunc_normal_': lambda init, t: init.trunc_normal_(t),
    'orthogonal_': lambda init, t: init.orthogonal_(t),
    'method_uniform_': lambda init, t: t.uniform_(-1, 1),
    'method_normal_': lambda init, t: t.normal_(2.0, 0.5),
    'noncontiguous_uniform_': lambda init, t: t.t().uniform_(),
}


@pytest.mark.parametrize('dtype', ['complex64', 'complex128'])
@pytest.mark.parametrize('name', list(INITS))
def test_complex_init_matches_torch(name, dtype):
    def run(lib):
        lib.manual_seed(0)
        t = lib.empty(3, 4, dtype=getattr(lib, dtype))
        try:
            INITS[name](lib.nn.init, t)
        except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
            return type(e), str(e).replace('torch.', '').replace('dynagrad.', '')
        return t.tolist()
    assert run(dg) == run(torch)


def test_complex_uniform_ranges_and_normal_spread():
    dg.manual_seed(1)
    t = dg.empty(20000, dtype=dg.complex64).uniform_(-2.0, 3.0)
    assert t.real.min() >= -2.0 and t.real.max() < 3.0
    assert t.imag.min() >= -2.0 and t.imag.max() < 3.0
    z = dg.empty(20000, dtype=dg.complex128).normal_(1.0, 2.0)
    # torch's mean goes to both parts; E|z - (1+1j)|^2 = std^2
    spread = ((z - (1 + 1j)).abs() ** 2).mean().item()
    assert abs(spread - 4.0) < 0.2


def test_complex_fill_of_a_leaf_keeps_no_grad_rules():
    w = dg.nn.Parameter(dg.empty(2, 2, dtype=dg.complex64))
    with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
        w.uniform_()
    with dg.no_grad():
        w.normal_()
    assert w.requires_grad and w.grad_fn is None
