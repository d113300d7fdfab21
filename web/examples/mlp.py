# A small MLP learns two interleaved spirals; the loss curve updates as it trains.
import numpy as np
import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F
import playground

dg.manual_seed(0)
rng = np.random.default_rng(0)
n = 200
t = rng.uniform(0.25, 1.0, n) * 3 * np.pi
label = rng.integers(0, 2, n)
sign = np.where(label == 1, 1.0, -1.0)
points = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], 1) / 10
x = dg.tensor(points + rng.normal(0, 0.02, points.shape), dtype=dg.float32)
y = dg.tensor(label)

model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                      nn.Linear(32, 2))
opt = dg.optim.Adam(model.parameters(), lr=0.02)
steps = 150
for step in range(steps):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    playground.loss(loss.item(), step)
    if step % 25 == 0 or step == steps - 1:
        playground.progress((step + 1) / steps, f'step {step + 1}/{steps}')
        print(f'step {step:3d}  loss {loss.item():.6f}')

accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f'training accuracy {accuracy:.3f}')
playground.graph(F.cross_entropy(model(x[:4]), y[:4]), params=dict(model.named_parameters()))
