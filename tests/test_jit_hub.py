"""``jit`` (script as PyTorch's PYTORCH_JIT=0 answers it), ``_jit_internal``, ``hub``,
``serialization``'s type names and ``utils.cpp_extension``: the import-time surface libraries
touch, checked against torch."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import dynagrad as dg


def _torch_without_jit(code):
    """What torch answers under PYTORCH_JIT=0 (read at import, so in a fresh process)."""
    out = subprocess.run([sys.executable, '-c', 'import torch\n' + code], capture_output=True,
                         text=True, env={**os.environ, 'PYTORCH_JIT': '0'}, check=True)
    return out.stdout.split()


def test_script_returns_its_argument_and_runs_eagerly():
    assert _torch_without_jit(
        'def f(x): return x + 1\nm = torch.nn.Linear(2, 2)\n'
        'print(torch.jit.script(f) is f, torch.jit.script(m) is m, '
        'torch._jit_internal._copy_to_script_wrapper(f) is f, torch.jit.annotate(int, 3))'
    ) == ['True', 'True', 'True', '3']

    @dg.jit.script
    def scaled(x, k: float = 2.0):
        return x * k

    x = dg.randn(3, requires_grad=True)
    scaled(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0, np.float32))
    m = dg.nn.Linear(2, 2)
    assert dg.jit.script(m) is m and not isinstance(m, dg.jit.ScriptModule)
    assert dg.jit.annotate(int, 3) == 3 and dg.jit.export(len) is len
    from dynagrad._jit_internal import _copy_to_script_wrapper
    assert _copy_to_script_wrapper(len) is len
    assert issubclass(dg.jit.TracerWarning, Warning)


def test_torchscript_artefacts_are_refused_when_asked_for(tmp_path):
    with pytest.raises(RuntimeError, match='no TorchScript compiler'):
        dg.jit.save(dg.nn.Linear(2, 2), str(tmp_path / 'm.pt'))
    with pytest.raises(RuntimeError, match='no TorchScript compiler'):
        dg.jit.load(str(tmp_path / 'm.pt'))


def test_hub_cache_dir_follows_torch(monkeypatch, tmp_path):
    import torch.hub as th
    monkeypatch.setenv('TORCH_HOME', str(tmp_path / 'th'))
    assert dg.hub.get_dir() == th.get_dir()
    monkeypatch.delenv('TORCH_HOME')
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))
    assert dg.hub.get_dir() == th.get_dir()
    assert dg.hub.HASH_REGEX.pattern == th.HASH_REGEX.pattern
    assert dg.hub.HASH_REGEX.search('resnet18-f37072fd.pth').group(1) == 'f37072fd'


def test_hub_reads_the_cache_and_never_downloads(monkeypatch, tmp_path):
    monkeypatch.setattr(dg.hub, '_hub_dir', None)
    dg.hub.set_dir(str(tmp_path))
    assert dg.hub.get_dir() == str(tmp_path)
    url = 'https://example.invalid/models/tiny-0123abcd.pth'
    with pytest.raises(RuntimeError, match='does not download'):
        dg.hub.download_url_to_file(url, str(tmp_path / 'x'))
    with pytest.raises(RuntimeError, match='does not download'):
        dg.hub.load_state_dict_from_url(url)
    (tmp_path / 'checkpoints').mkdir()
    torch.save({'w': torch.arange(3.0)}, str(tmp_path / 'checkpoints' / 'tiny-0123abcd.pth'))
    state = dg.hub.load_state_dict_from_url(url)
    np.testing.assert_array_equal(state['w'].numpy(), [0.0, 1.0, 2.0])


def test_serialization_type_names():
    import torch.serialization as ts
    for name in ('MAP_LOCATION', 'FileLike', 'SourceChangeWarning'):
        assert hasattr(ts, name) and hasattr(dg.serialization, name)
    assert issubclass(dg.serialization.SourceChangeWarning, Warning)


def test_cpp_extension_imports_and_refuses_to_build():
    from dynagrad.utils import cpp_extension
    with pytest.raises(RuntimeError, match="PyTorch's C\\+\\+ ABI"):
        cpp_extension.load('ext', ['ext.cpp'])
    with pytest.raises(RuntimeError, match="PyTorch's C\\+\\+ ABI"):
        cpp_extension.load_inline('ext', 'int f() { return 1; }')
    import torch.utils.cpp_extension as tce
    assert set(cpp_extension.__all__) <= set(tce.__all__)


def test_c_extension_names_libraries_call():
    assert dg._C._get_tracing_state() is torch._C._get_tracing_state() is None
    assert dg._C._LinAlgError is dg.linalg.LinAlgError
    assert torch._C._LinAlgError is torch.linalg.LinAlgError
