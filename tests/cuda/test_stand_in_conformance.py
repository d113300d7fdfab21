"""The whole conformance table on the 'cuda' device, with CuPy played by NumPy.

Every row's forward (all its forms) and backward run with dynagrad's tensors made on
'cuda', backed by the stand-in of tests/fake_cuda.py: NumPy computes, but its arrays are
tagged as device arrays and a host array reaching a device computation raises. So the
values and gradients still match torch's (on the CPU) only if every op keeps its work on
the device: nothing allocated on the host by a hard-coded NumPy call, nothing read back
through ``.numpy()``, results reported on 'cuda:0'. What it cannot see is what only a GPU
shows (CuPy's own gaps, kernel speed): tests/cuda/test_gpu.py runs the table on one.
"""
import pytest

import fake_cuda
from ops import test_conformance as conformance

_STORAGE = ("the stand-in's arrays are device-tagged views of NumPy arrays, so walking a "
            "view's .base to its storage reaches a host array (CuPy's bases are CuPy's: "
            'to be checked on a GPU)')
_LAPACK = ("LDL (sytrf/sytrs) comes from SciPy's LAPACK, which computes on host arrays; CuPy "
           'has no LDL factorization')
_NO_AIRY = ("scipy.special.airy has no counterpart in cupyx.scipy.special (as the "
            'stand-in lists it; to be checked on a GPU)')
# op name -> why its rows cannot run on the stand-in device (strict xfails)
KNOWN = {'as_strided': _STORAGE, 'as_strided_copy': _STORAGE,
         'linalg.ldl_factor': _LAPACK, 'linalg.ldl_factor_ex': _LAPACK,
         'linalg.ldl_solve': _LAPACK, 'special.airy_ai': _NO_AIRY}


@pytest.fixture(scope='module')
def on_fake_cuda():
    with fake_cuda.registered(), conformance.on_device('cuda'):
        yield


@pytest.mark.filterwarnings('ignore::UserWarning')
@pytest.mark.filterwarnings('ignore::FutureWarning')
@pytest.mark.parametrize('op,sample,i', conformance.device_rows(KNOWN))
def test_row_on_the_device(on_fake_cuda, op, sample, i):
    conformance.check_row(op, sample, i)
