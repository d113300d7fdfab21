"""The backend: importing dynagrad changes nothing process-wide (the allocator among them),
the allocator setting is an explicit opt-in, and the array door can be pointed elsewhere."""
import json
import subprocess
import sys

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.backend import array_namespace, xp

# Allocates ten 20 MB arrays, frees them, and prints how many MB of resident memory the
# process kept (glibc hands big freed blocks back unless told otherwise).
FREE_AND_MEASURE = '''
import numpy as np
def resident_mb():
    return int(open('/proc/self/statm').read().split()[1]) * 4096 // (1 << 20)
start = resident_mb()
arrays = [np.ones(20 << 20, np.uint8) for _ in range(10)]
del arrays
print(resident_mb() - start)
'''

# Everything process-wide a library could change at import, as one JSON-able snapshot.
SNAPSHOT = '''
import gc, json, locale, os, signal, sys, threading, warnings, faulthandler
import numpy as np
def snapshot():
    return dict(
        errstate=np.geterr(), printoptions={k: str(v) for k, v in np.get_printoptions().items()},
        random_state=str(np.random.get_state()[1][:4]),
        warnings=[repr(f) for f in warnings.filters], excepthook=repr(sys.excepthook),
        threading_excepthook=repr(threading.excepthook), recursion=sys.getrecursionlimit(),
        switch=sys.getswitchinterval(), gc=[gc.isenabled(), gc.get_threshold()],
        signals={s.name: repr(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM,
                                                              signal.SIGUSR1, signal.SIGCHLD)},
        environ=sorted(os.environ.items()), cwd=os.getcwd(), umask=os.umask(0o22),
        locale=locale.setlocale(locale.LC_ALL), faulthandler=faulthandler.is_enabled(),
        meta_path=[repr(type(f)) for f in sys.meta_path], displayhook=repr(sys.displayhook))
before = snapshot()
import dynagrad
x = dynagrad.ones(3, requires_grad=True)
(x.log() * 2).sum().backward()            # an op and a backward pass change nothing either
after = snapshot()
print(json.dumps({k: [before[k], after[k]] for k in before if before[k] != after[k]}))
'''


def _run(code):
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_import_and_use_change_no_process_wide_setting():
    changed = json.loads(_run(SNAPSHOT))
    assert changed == {}


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='glibc malloc tuning: Linux')
def test_import_leaves_the_allocator_alone_and_the_opt_in_changes_it():
    plain = int(_run(FREE_AND_MEASURE))
    imported = int(_run('import dynagrad\n' + FREE_AND_MEASURE))
    opted_in = int(_run('import dynagrad\ndynagrad.backend.keep_freed_memory()\n'
                        + FREE_AND_MEASURE))
    assert plain < 20 and imported < 20, (plain, imported)   # the 200 MB went back
    assert opted_in > 150, opted_in      # kept for reuse: the point of the opt-in


class _Counting:
    """NumPy's API with a count of the calls made through it."""

    def __init__(self):
        self.calls = {}

    def __getattr__(self, name):
        value = getattr(np, name)
        if callable(value) and not isinstance(value, type):
            def counted(*args, **kwargs):
                self.calls[name] = self.calls.get(name, 0) + 1
                return value(*args, **kwargs)
            return counted
        return value


def test_array_namespace_reaches_every_module_and_is_restored():
    counting = _Counting()
    with array_namespace(counting):
        x = dg.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        y.sum().backward()
    assert counting.calls.get('exp', 0) >= 1        # the op computed through the door
    assert xp.exp is np.exp                         # and the door is NumPy again
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]))
