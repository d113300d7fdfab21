"""Subclasses of built-in modules that mix in their own class or serve weights from
elsewhere (as pyro's PyroModule does) behave as on torch."""
import numpy as np
import pytest
import torch

import dynagrad


def mixed(lib, name):
    class Mixin(lib.nn.Module):
        def __init__(self):
            self.mixin_ran = True
            super().__init__()
    # the built-in class first, the mixin after it: its __init__ runs through super()
    return type('Mixed' + name, (getattr(lib.nn, name), Mixin), {})


@pytest.mark.parametrize('name', ['Sigmoid', 'ReLU', 'Tanh', 'GELU', 'Softmax'])
def test_activation_init_is_cooperative_as_torch(name):
    mine, theirs = mixed(dynagrad, name)(), mixed(torch, name)()
    assert getattr(theirs, 'mixin_ran', False)
    assert getattr(mine, 'mixin_ran', False)


def test_activation_arguments_still_reach_the_module():
    assert dynagrad.nn.LeakyReLU(0.2).negative_slope == torch.nn.LeakyReLU(0.2).negative_slope
    with pytest.raises(TypeError):
        dynagrad.nn.Sigmoid(1)


@pytest.mark.parametrize('kind', ['GRU', 'LSTM', 'RNN'])
def test_rnn_reads_its_weights_as_attributes_as_torch(kind):
    """A weight removed from _parameters and served by __getattr__ (scaled here) is what
    forward uses, on torch and on dynagrad."""
    def run(lib):
        lib.manual_seed(0)

        class Served(getattr(lib.nn, kind)):
            def __getattr__(self, name):
                if name in self.__dict__.get('_served', {}):
                    return self._served[name] * 0.5
                return super().__getattr__(name)
        m = Served(2, 3, num_layers=2)
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) *
                                   (i + 1) / 5, dtype=lib.float32))
        served = {'weight_ih_l0': m.weight_ih_l0.detach().clone()}
        del m._parameters['weight_ih_l0']
        m.__dict__['_served'] = served
        if hasattr(m, '_init_flat_weights'):
            m._init_flat_weights()
        x = lib.tensor(np.linspace(-2, 2, 5 * 4 * 2).reshape(5, 4, 2), dtype=lib.float32)
        return m(x)[0].detach().numpy()
    np.testing.assert_allclose(run(dynagrad), run(torch), rtol=1e-5, atol=1e-6)
