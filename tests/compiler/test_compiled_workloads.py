"""The benchmark workloads' models trained 20 steps compiled and eagerly: the same losses,
step for step (issue 19's acceptance check)."""
import numpy as np
import pytest

import dynagrad as dg
from benchmarks import workloads as W


def _trajectory(make_model, batches, loss_of, compiled, steps=20, lr=1e-2):
    model = make_model()
    run = dg.compile(model) if compiled else model
    opt = dg.optim.Adam(model.parameters(), lr=lr)
    losses = []
    dg.manual_seed(7)
    for k in range(steps):
        opt.zero_grad()
        loss = loss_of(run, *batches(k))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, run


def _cnn():
    dg.manual_seed(0)
    nn = dg.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 10))


def _lstm_lm():
    dg.manual_seed(0)
    nn = dg.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.rnn = nn.Embedding(50, 16), nn.LSTM(16, 24, num_layers=2)
            self.drop, self.out = nn.Dropout(0.2), nn.Linear(24, 50)

        def forward(self, x):
            h, _ = self.rnn(self.drop(self.emb(x)))
            return self.out(self.drop(h))
    return LM()


def _data(shape, high=None, seed=0):
    rng = np.random.default_rng(seed)

    def batch(k):
        r = np.random.default_rng(seed + k)
        if high is None:
            return (dg.tensor(r.standard_normal(shape), dtype=dg.float32),
                    dg.tensor(r.integers(0, 10, shape[0])))
        x = dg.tensor(r.integers(0, high, shape))
        return x, dg.tensor(r.integers(0, high, shape))
    return batch


def _class_loss(run, x, y):
    return dg.nn.functional.cross_entropy(run(x), y)


def _lm_loss(run, x, y):
    logits = run(x)
    return dg.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))


def _gpt():
    return W.gpt_model(dg, W.GPT_SIZES['smoke'], use_sdpa=False)


def _gpt_loss(run, x, y):
    return run(x, y)[1]


CASES = {
    'cnn': (_cnn, _data((8, 1, 28, 28)), _class_loss),
    'lstm_lm': (_lstm_lm, _data((10, 4), high=50), _lm_loss),
    'gpt': (_gpt, _data((4, 16), high=65), _gpt_loss),
}


@pytest.mark.parametrize('name', sorted(CASES))
def test_compiled_training_equals_eager(name):
    make_model, batches, loss_of = CASES[name]
    eager, _ = _trajectory(make_model, batches, loss_of, compiled=False)
    compiled, run = _trajectory(make_model, batches, loss_of, compiled=True)
    assert compiled == eager
    events = [what for _, what in run.__dict__['_compiled'].events]
    assert events[-1].startswith('compiled'), events     # it did compile, not fall back
