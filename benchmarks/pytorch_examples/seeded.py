"""Run a script as ``python script.py args`` would, with ``torch.manual_seed(s)`` turned into
``manual_seed(s + EXAMPLE_SEED_OFFSET)``: how the check measures PyTorch's own run-to-run
spread on programs that fix their seed.

    python seeded.py script.py [args...]                      # on PyTorch
    python -m dynagrad.run seeded.py script.py [args...]      # on dynagrad
"""
import os
import runpy
import sys

import torch

_offset = int(os.environ.get('EXAMPLE_SEED_OFFSET', '0'))
if _offset:
    _manual_seed = torch.manual_seed

    def manual_seed(seed):
        return _manual_seed(int(seed) + _offset)
    torch.manual_seed = manual_seed

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name='__main__')
