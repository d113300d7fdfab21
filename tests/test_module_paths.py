"""Classes and functions importable from the module where PyTorch defines them, as programs and
pickled checkpoints name them (torch.nn.modules.activation.MultiheadAttention, ...)."""
import importlib
import inspect

import pytest
import torch

import dynagrad

NAMESPACES = ['nn', 'nn.init', 'nn.utils', 'nn.functional', 'optim', 'optim.lr_scheduler',
              'utils.data', 'autograd', 'distributions', '']
# torch's compiled core: no Python module path to mirror
SKIP_MODULES = ('torch._C',)


def _pairs():
    for ns in NAMESPACES:
        t = importlib.import_module('torch' + ('.' + ns if ns else ''))
        d = importlib.import_module('dynagrad' + ('.' + ns if ns else ''))
        for name in dir(t):
            obj = getattr(t, name)
            if name.startswith('_') or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            module = getattr(obj, '__module__', None) or ''
            if not hasattr(d, name) or not module.startswith('torch') or \
                    module.startswith(SKIP_MODULES):
                continue
            yield name, 'dynagrad' + module[len('torch'):]


def test_what_dynagrad_has_is_where_torch_defines_it():
    missing = []
    pairs = sorted(set(_pairs()))
    assert len(pairs) > 250       # the scan sees the API
    for name, module in pairs:
        try:
            found = hasattr(importlib.import_module(module), name)
        except ImportError:
            found = False
        if not found:
            missing.append(f'{module}.{name}')
    assert not missing, 'not importable from torch\'s module path:\n' + '\n'.join(missing)


@pytest.mark.parametrize('path', [
    'nn.modules.activation.MultiheadAttention', 'nn.modules.linear.NonDynamicallyQuantizableLinear',
    'nn.modules.linear.Identity', 'nn.modules.conv.Conv2d', 'nn.modules.batchnorm.BatchNorm2d',
    'nn.modules.module.Module', 'optim.optimizer.Optimizer', 'optim.adamw.AdamW',
    'utils.data.dataloader.DataLoader', 'nn.modules.rnn.LSTM', 'nn.modules.sparse.Embedding',
    'nn.modules.dropout.Dropout'])
def test_named_paths(path):
    module, name = path.rsplit('.', 1)
    assert hasattr(importlib.import_module('torch.' + module), name)
    found = getattr(importlib.import_module('dynagrad.' + module), name)
    public = getattr(importlib.import_module('dynagrad.' + module.split('.')[0]), name, None)
    assert inspect.isclass(found) and (public is None or public is found)


def test_out_proj_is_the_class_torch_names():
    d = dynagrad.nn.MultiheadAttention(4, 2).out_proj
    t = torch.nn.MultiheadAttention(4, 2).out_proj
    assert type(d).__name__ == type(t).__name__ == 'NonDynamicallyQuantizableLinear'
    assert isinstance(d, dynagrad.nn.Linear)
