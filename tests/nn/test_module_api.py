"""Module: state dicts, buffers, hooks, dtype moves and traversal, against torch."""
import numpy as np
import pytest
import torch

import dynagrad as dg


def pair():
    """The same two-layer model in both libraries, with identical weights."""
    class Net:
        @staticmethod
        def build(lib):
            class M(lib.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc1 = lib.nn.Linear(3, 4)
                    self.fc2 = lib.nn.Linear(4, 2)
                    self.register_buffer('steps', lib.zeros(1))
                    self.register_buffer('scratch', lib.zeros(2), persistent=False)

                def forward(self, x):
                    return self.fc2(self.fc1(x).relu())
            return M()
    d, t = Net.build(dg).double(), Net.build(torch).double()
    with torch.no_grad():
        for (name, tp) in t.named_parameters():
            tp.copy_(torch.tensor(d.get_parameter(name).detach().numpy()))
    return d, t


def test_state_dict_keys_values_and_persistence_match_torch():
    d, t = pair()
    assert list(d.state_dict()) == list(t.state_dict())
    assert 'scratch' not in d.state_dict()
    for k, v in d.state_dict().items():
        np.testing.assert_allclose(v.numpy(), t.state_dict()[k].numpy())
        assert not v.requires_grad


def test_load_state_dict_round_trip_and_report():
    d, _ = pair()
    d2, _ = pair()
    result = d2.load_state_dict(d.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == '<All keys matched successfully>'
    for k, v in d2.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), d.state_dict()[k].numpy())


def test_load_state_dict_non_strict_reports_missing_and_unexpected():
    d, t = pair()
    sd = d.state_dict()
    del sd['fc2.bias']
    sd['extra'] = dg.zeros(1)
    tsd = {k: torch.tensor(v.numpy()) for k, v in sd.items()}
    assert tuple(d.load_state_dict(sd, strict=False)) == tuple(t.load_state_dict(tsd,
                                                                                 strict=False))


def test_failed_load_changes_nothing():
    d, _ = pair()
    before = {k: v.numpy().copy() for k, v in d.state_dict().items()}
    sd = {k: v.clone() + 1 for k, v in d.state_dict().items()}
    sd['fc2.weight'] = dg.zeros(3, 3, dtype=dg.float64)
    with pytest.raises(RuntimeError, match=r'size mismatch for fc2.weight: copying a param '
                                           r'with shape dynagrad.Size\(\[3, 3\]\) from '
                                           r'checkpoint, the shape in current model is '
                                           r'dynagrad.Size\(\[2, 4\]\)'):
        d.load_state_dict(sd)
    for k, v in d.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
    with pytest.raises(RuntimeError, match='Missing key'):
        d.load_state_dict({})


def test_hooks_match_torch():
    d, t = pair()
    logs = {}
    for lib, m in ((dg, d), (torch, t)):
        log = logs[lib.__name__] = []
        m.fc1.register_forward_pre_hook(lambda mod, a: log.append(('pre', tuple(a[0].shape))))
        m.fc1.register_forward_hook(lambda mod, a, o: log.append(('fwd', tuple(o.shape))))

        def bh(mod, gi, go, log=log):
            log.append(('bwd', np.round(gi[0].detach().numpy(), 8).tolist(),
                        np.round(go[0].detach().numpy(), 8).tolist()))
            return (gi[0] * 3,)
        h = m.fc2.register_full_backward_hook(bh)
        x = lib.tensor(np.arange(6.).reshape(2, 3) / 7, dtype=lib.float64, requires_grad=True)
        (m(x) ** 2).sum().backward()
        log.append(np.round(x.grad.numpy(), 8).tolist())
        h.remove()
        x.grad = None
        (m(x) ** 2).sum().backward()
        log.append(np.round(x.grad.numpy(), 8).tolist())
    assert logs['dynagrad'] == logs['torch']


def test_forward_hook_can_replace_output_and_pre_hook_the_input():
    m = dg.nn.Linear(2, 2)
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    m.register_forward_hook(lambda mod, args, out: out + 1)
    out = m(dg.ones(1, 2))
    np.testing.assert_allclose(out.detach().numpy(), m.bias.detach().numpy()[None] + 1)


def test_backward_hook_when_no_input_requires_grad():
    m = dg.nn.Linear(2, 1)
    seen = []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, go[0].shape)))
    m(dg.ones(3, 2)).sum().backward()
    assert seen == [((None,), (3, 1))]


def test_to_double_and_float_keep_parameter_identity():
    d, _ = pair()
    w = d.fc1.weight
    d.float()
    assert d.fc1.weight is w and w.dtype == dg.float32 and d.steps.dtype == dg.float32
    assert isinstance(w, dg.nn.Parameter) and w.requires_grad and w.is_leaf


def test_traversal_and_submodules():
    d, t = pair()
    assert [n for n, _ in d.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in d.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in d.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert d.get_submodule('fc2') is d.fc2
    with pytest.raises(AttributeError):
        d.get_submodule('fc3')
    shared = dg.nn.Linear(2, 2)
    seq = dg.nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2  # tied weights appear once


def test_registration_errors_match_torch():
    for lib in (dg, torch):
        m = lib.nn.Module()
        with pytest.raises(KeyError):
            m.register_buffer('a.b', lib.zeros(1))
        with pytest.raises(TypeError):
            m.register_parameter('w', lib.zeros(1))
        with pytest.raises(TypeError):
            m.register_buffer('b', 3)


def test_train_eval_and_zero_grad():
    d, _ = pair()
    d.eval()
    assert not d.training and not d.fc1.training
    d.train()
    assert d.fc2.training
    d(dg.ones(1, 3, dtype=dg.float64)).sum().backward()
    d.zero_grad(set_to_none=False)
    assert np.all(d.fc1.weight.grad.numpy() == 0)
    d.zero_grad()
    assert d.fc1.weight.grad is None
