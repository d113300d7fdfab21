"""Each optimizer's update rounds as PyTorch's does: from the same parameters and the same
gradients, six steps of every configuration of test_optimizers.CASES equal PyTorch's to
the last bit (one ulp at most), where PyTorch runs its portable kernels
(ATEN_CPU_CAPABILITY=default). Its AVX2/AVX512 kernels fuse multiply-adds, which NumPy
cannot, so the comparison pins that code path in a child process."""
import json
import os
import platform
import subprocess
import sys

import numpy as np
import pytest
from test_optimizers import CASES, _id

import dynagrad

SCRIPT = r'''
import json, sys
import numpy as np
import torch
cases, p0, grads = json.loads(sys.stdin.read())
out = []
for name, kw in cases:
    ps = [torch.nn.Parameter(torch.tensor(np.array(p))) for p in p0]
    opt = getattr(torch.optim, name)(ps, **kw)
    traj = []
    for g in grads:
        for p, gg in zip(ps, g):
            p.grad = torch.tensor(np.array(gg))
        opt.step()
        traj.append([p.detach().numpy().tolist() for p in ps])
    out.append(traj)
print(json.dumps(out))
'''


def _problem():
    rng = np.random.default_rng(1)
    p0 = [rng.standard_normal((7, 5)) for _ in range(2)]
    grads = [[rng.standard_normal((7, 5)) * 10 ** rng.uniform(-3, 1) for _ in range(2)]
             for _ in range(6)]
    return p0, grads


@pytest.fixture(scope='module')
def torch_portable_trajectories():
    p0, grads = _problem()
    payload = json.dumps([[[n, kw] for n, kw in CASES], [p.tolist() for p in p0],
                          [[g.tolist() for g in step] for step in grads]])
    env = dict(os.environ, ATEN_CPU_CAPABILITY='default')
    done = subprocess.run([sys.executable, '-c', SCRIPT], input=payload, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(platform.machine() not in ('x86_64', 'AMD64'),
                    reason="PyTorch's portable kernels may contract multiply-adds elsewhere")
@pytest.mark.parametrize('index', range(len(CASES)), ids=[_id(c) for c in CASES])
def test_update_rounds_as_pytorch(index, torch_portable_trajectories):
    name, kwargs = CASES[index]
    p0, grads = _problem()
    ps = [dynagrad.nn.Parameter(dynagrad.tensor(p.copy())) for p in p0]
    opt = getattr(dynagrad.optim, name)(ps, **kwargs)
    for k, step_grads in enumerate(grads):
        for p, g in zip(ps, step_grads):
            p.grad = dynagrad.tensor(g.copy())
        opt.step()
        for i, (p, theirs) in enumerate(zip(ps, torch_portable_trajectories[index][k])):
            np.testing.assert_array_max_ulp(p.detach().numpy(), np.array(theirs), maxulp=1)
