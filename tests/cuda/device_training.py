"""A few steps of classification training on a device, for comparing devices' losses."""
import numpy as np

import dynagrad as dg


def train(model, device, optimizer_cls, x_shape, classes, steps=3, **opt_kw):
    """``steps`` steps of ``optimizer_cls`` on one fixed random batch of shape ``x_shape``
    with ``classes`` labels, everything on ``device``; returns (losses, optimizer)."""
    opt = optimizer_cls(model.parameters(), **opt_kw)
    rng = np.random.default_rng(0)
    x = dg.tensor(rng.standard_normal(x_shape).astype(np.float32), device=device)
    y = dg.tensor(rng.integers(0, classes, x_shape[0]), device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = dg.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, opt
