"""python -m dynagrad.run: unmodified PyTorch programs get dynagrad for `import torch`."""
import subprocess
import sys
import textwrap

import pytest


def _run(tmp_path, source, *args, module=False, files=None):
    script = tmp_path / 'prog.py'
    script.write_text(textwrap.dedent(source))
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    target = ['-m', 'prog'] if module else [str(script)]
    return subprocess.run([sys.executable, '-m', 'dynagrad.run', *target, *args],
                          capture_output=True, text=True, timeout=120,
                          cwd=tmp_path if module else '/')


def test_script_runs_as_main_with_torch_served_by_dynagrad(tmp_path):
    out = _run(tmp_path, '''
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        import dynagrad
        import sibling
        assert torch is dynagrad and nn is dynagrad.nn and F is dynagrad.nn.functional
        assert DataLoader is dynagrad.utils.data.DataLoader
        print(__name__, sys.argv[1:], sibling.VALUE, type(torch.ones(2) * 2).__module__)
    ''', 'a', '--flag', files={'sibling.py': 'VALUE = 7\n'})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['__main__', "['a',", "'--flag']", '7', 'dynagrad.tensor']


def test_module_mode(tmp_path):
    out = _run(tmp_path, '''
        import torch
        print(__name__, torch.__name__)
    ''', module=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['__main__', 'torch']    # as programs read it (see run.py)


def test_spawned_processes_get_dynagrad_too(tmp_path):
    out = _run(tmp_path, '''
        import multiprocessing as mp
        import torch

        def child(q):
            import torch.nn
            q.put((torch.__name__, torch.nn.__name__))

        if __name__ == '__main__':
            ctx = mp.get_context('spawn')
            q = ctx.Queue()
            p = ctx.Process(target=child, args=(q,))
            p.start()
            print(*q.get())
            p.join()
    ''')
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['torch', 'dynagrad.nn']


def test_a_torch_module_dynagrad_lacks_fails_clearly(tmp_path):
    out = _run(tmp_path, 'import torch.not_a_module\n')
    assert out.returncode == 1
    assert "ModuleNotFoundError: No module named 'torch.not_a_module'" in out.stderr
    assert 'dynagrad.run' in out.stderr


def test_a_missing_script_is_reported():
    out = subprocess.run([sys.executable, '-m', 'dynagrad.run', '/no/such/file.py'],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "can't open file" in out.stderr


def test_install_refuses_when_real_torch_is_loaded():
    pytest.importorskip('torch')
    code = ('import torch, dynagrad.run\n'
            'try:\n    dynagrad.run.install()\nexcept RuntimeError as e:\n    print(e)\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120)
    assert 'torch is already imported' in out.stdout, out.stderr


def test_torch_name_is_torch_and_dynagrad_still_imports(tmp_path):
    """pyro walks 'torch.distributions.x' targets from torch after asserting the first part
    is torch.__name__; dynagrad's lazy submodules and relative imports still resolve."""
    out = _run(tmp_path, '''
        import torch
        target = 'torch.distributions.constraints.positive'.split('.')
        assert target[0] == torch.__name__
        obj = torch
        for part in target[1:]:
            obj = getattr(obj, part)
        import torch.hub, dynagrad
        assert dynagrad is torch and torch.hub is dynagrad.hub
        print(torch.__name__, obj is dynagrad.distributions.constraints.positive,
              torch.utils.data.DataLoader.__module__)
    ''')
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['torch', 'True', 'dynagrad.utils.data.dataloader']


def test_aliased_modules_keep_dynagrads_spec(tmp_path):
    """A relative import inside dynagrad, reached through a torch.x import, raises no
    ImportWarning (__package__ != __spec__.parent), which pyro's warnings-as-errors turns
    into failures."""
    out = _run(tmp_path, '''
        import warnings
        warnings.simplefilter('error')
        import torch
        import torch.autograd.function as f
        assert f.__spec__.parent == f.__package__ == 'dynagrad.autograd', f.__spec__
        assert torch.__spec__.name == torch.__package__ == 'dynagrad'
        x = torch.zeros(3, requires_grad=True).clone()
        x[1] = 2.0          # copy_ into a slice: a relative import in autograd.inplace
        print(x.sum().item())
    ''')
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ['2.0']
