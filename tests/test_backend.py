"""The allocator setting dynagrad applies at import, and its opt-out."""
import subprocess
import sys

import pytest

from dynagrad.backend import keep_freed_memory


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc malloc tuning: Linux')
def test_keep_freed_memory_applies_on_glibc_and_respects_the_opt_out(monkeypatch):
    assert keep_freed_memory() is True
    monkeypatch.setenv('DYNAGRAD_KEEP_FREED_MEMORY', '0')
    assert keep_freed_memory() is False


def test_import_with_opt_out_still_works():
    code = 'import dynagrad as dg; print((dg.ones(2) * 2).sum().item())'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env={'DYNAGRAD_KEEP_FREED_MEMORY': '0', 'PATH': '/usr/bin:/bin'},
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == '4.0'
