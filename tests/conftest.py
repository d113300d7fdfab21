"""Shared test configuration: the op-conformance summary line, and the ``kernels`` fixture
of the native-kernel tests."""
import os
import sys
from pathlib import Path

import pytest

# The tests test the tree they live in, whichever copy of dynagrad is installed (a second
# git worktree, a fresh clone next to an editable install): its src/ goes first on the path,
# here and in the programs the tests start.
_SRC = str(Path(__file__).resolve().parents[1] / 'src')
if sys.path[0] != _SRC:
    sys.path.insert(0, _SRC)
    os.environ['PYTHONPATH'] = os.pathsep.join(
        [_SRC] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])


def pytest_terminal_summary(terminalreporter):
    op_db = sys.modules.get('op_db')
    if op_db is not None and op_db.STATS['samples']:
        terminalreporter.write_line(
            f"op conformance: {len(op_db.STATS['ops'])} ops covered, "
            f"{len(op_db.STATS['samples'])} samples run")


@pytest.fixture
def kernels(request):
    """Run the test with ``request.param``'s kernels (parametrise it indirectly, over
    ``native_support.MODES``), and count every native kernel's calls."""
    import native_support   # here, not above: a session that never asks keeps dynagrad unimported
    with native_support.kernels_counted(request.param) as calls:
        yield calls
