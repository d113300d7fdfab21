"""The main demo: trains, reaches a high accuracy, saves and reloads, plots."""
import os
import subprocess
import sys
import zipfile

from dynagrad.examples import digits


def test_short_training_run_learns_saves_reloads_and_plots(tmp_path, capsys):
    accuracy = digits.main(['--epochs', '4', '--quiet', '--out', str(tmp_path)])
    out = capsys.readouterr().out
    assert accuracy > 0.9
    assert os.path.getsize(tmp_path / 'digits.pt') > 10_000
    with zipfile.ZipFile(tmp_path / 'digits.pt') as archive:   # PyTorch's checkpoint format
        assert 'digits/data.pkl' in archive.namelist()
    import torch
    weights = torch.load(tmp_path / 'digits.pt', weights_only=True)
    assert list(weights) == list(digits.DigitsNet().state_dict())
    with open(tmp_path / 'digits-training.png', 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
    assert 'reloaded: test accuracy' in out and 'epoch  4' in out


def test_help_lists_the_options():
    result = subprocess.run([sys.executable, '-m', 'dynagrad.examples.digits', '--help'],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for option in ('--epochs', '--batch-size', '--lr', '--seed', '--out'):
        assert option in result.stdout
