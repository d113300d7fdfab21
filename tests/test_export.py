"""dynagrad.export: a module's forward captured as an inspectable program (torch.export's
API): the graph and signature name what the program reads, module() runs the program (not
the original Python) with the module's values and gradients, and a dynamic batch works."""
import numpy as np
import pytest

import dynagrad as dg


class _Net(dg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = dg.nn.Linear(4, 3)
        self.norm = dg.nn.LayerNorm(3)

    def forward(self, x):
        h = self.norm(self.lin(x)).relu()
        return h.view(x.shape[0], 3, 1), h.sum()


def test_the_graph_and_signature_name_parameters_inputs_and_ops():
    dg.manual_seed(0)
    ep = dg.export.export(_Net(), (dg.randn(5, 4),))
    assert ep.graph_signature.parameters == ['lin.weight', 'lin.bias', 'norm.weight',
                                             'norm.bias']
    assert ep.graph_signature.user_inputs == ['x']
    assert ep.graph_signature.inputs_to_parameters['p_lin_weight'] == 'lin.weight'
    ops = [n.target for n in ep.graph if n.op == 'call_function']
    assert ops == ['LinearOp', 'LayerNormOp', 'Relu', 'View', 'Sum']
    text = str(ep)
    assert text.startswith('ExportedProgram:')
    assert 'x: "f32[5, 4]"' in text and 'p_lin_weight: "f32[3, 4]"' in text
    assert 'relu: "f32[5, 3]" = Relu(native_layer_norm)' in text
    assert [name for name, _ in ep.named_parameters()] == ep.graph_signature.parameters
    assert ep.run_decompositions() is ep


def test_module_runs_the_program_with_the_modules_values_and_gradients():
    dg.manual_seed(0)
    net = _Net()
    x = dg.randn(5, 4)
    exported = dg.export.export(net, (x,)).module()
    got, total = exported(x)
    want, want_total = net(x)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    total.backward()
    grads = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    want_total.backward()
    for g, p in zip(grads, net.parameters()):
        np.testing.assert_array_equal(g, p.grad.numpy())
    with pytest.raises(RuntimeError, match=r'Expected input at \*args\[0\]\.shape\[0\] to be '
                                           r'equal to 5, but got 6'):
        exported(dg.randn(6, 4))


def test_a_dynamic_batch():
    dg.manual_seed(0)
    net = _Net()
    batch = dg.export.Dim('batch')
    ep = dg.export.export(net, (dg.randn(5, 4),), dynamic_shapes={'x': {0: batch}})
    assert 'x: "f32[s0, 4]"' in str(ep) and 'shape=(s0, 3, 1)' in str(ep)
    for b in (2, 7, 11):
        x = dg.randn(b, 4)
        np.testing.assert_array_equal(ep.module()(x)[0].detach().numpy(),
                                      net(x)[0].detach().numpy())
    with pytest.raises(RuntimeError, match='only the first'):
        dg.export.export(net, (dg.randn(5, 4),), dynamic_shapes={'x': {1: batch}})


def test_what_export_refuses():
    with pytest.raises(ValueError, match='Expected `mod` to be an instance of'):
        dg.export.export(lambda x: x * 2, (dg.randn(2),))

    class Reads(dg.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum().item() > 0 else x

    with pytest.raises(RuntimeError, match=r'Tensor\.item\(\) hands a value to Python'):
        dg.export.export(Reads(), (dg.randn(3),))
