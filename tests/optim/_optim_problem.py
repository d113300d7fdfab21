"""A small float64 problem shared by the optimizer tests: a 2-layer MLP (4 -> 8 -> 3, tanh)
on fixed data, built identically in dynagrad and torch from the same NumPy weights."""
import numpy as np

SHAPES = [(8, 4), (8,), (3, 8), (3,)]


def initial_arrays(seed=0):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(s) * 0.5 for s in SHAPES]
    x = rng.standard_normal((16, 4))
    y = rng.standard_normal((16, 3))
    return weights, x, y


class Problem:
    """Parameters, a loss function and a closure for one library (dynagrad or torch)."""

    def __init__(self, lib, seed=0, sign=1.0):
        weights, x, y = initial_arrays(seed)
        self.lib = lib
        self.params = [lib.nn.Parameter(lib.tensor(w.copy())) for w in weights]
        self.x, self.y = lib.tensor(x), lib.tensor(y)
        self.sign = sign

    def loss(self):
        w1, b1, w2, b2 = self.params
        h = (self.x @ w1.t() + b1).tanh()
        out = h @ w2.t() + b2
        return self.sign * ((out - self.y) ** 2).mean()

    def backward(self, opt):
        opt.zero_grad()
        loss = self.loss()
        loss.backward()
        return loss

    def closure_for(self, opt):
        def closure():
            return self.backward(opt)
        return closure

    def arrays(self):
        return [p.detach().numpy().copy() for p in self.params]

    def groups(self, spec):
        """'single' -> a list of params; 'split' -> weights and biases in two groups."""
        if spec == 'split':
            return [{'params': [self.params[0], self.params[2]]},
                    {'params': [self.params[1], self.params[3]], 'lr': 0.02}]
        return list(self.params)
