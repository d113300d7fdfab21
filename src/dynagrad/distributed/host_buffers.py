"""Device tensors cross MPI through host buffers.

MPI here is plain host MPI: CUDA-aware MPI is not used (mpi4py could hand it CuPy's
device pointers, but whether the MPI build accepts them cannot be known portably, and a
build that does not crashes instead of raising). So a collective on a 'cuda' tensor copies
its array to the host with the device backend's own conversion (what ``Tensor.cpu()``
uses), runs the MPI operation on that NumPy buffer, and copies the result back into the
tensor's existing device array, in place: ``tensor._data`` stays a device array and keeps
its identity, as PyTorch's collectives keep their tensors.

The CPU path pays one test: ``DEVICE_ARRAY_TYPES`` is empty until a device backend is
registered, so ``on_device`` is a falsy-set check for programs that never leave the CPU.
"""
from .._device import CPU_BACKEND, DEVICE_ARRAY_TYPES, backend_of

__all__ = ['on_device', 'to_host', 'copy_into']


def on_device(array):
    """Whether ``array`` lives on a non-CPU device (a CuPy array, or the test stand-in's)."""
    return bool(DEVICE_ARRAY_TYPES) and array.__class__ in DEVICE_ARRAY_TYPES


def to_host(array):
    """``array`` as a NumPy array MPI can read and write: a fresh host copy (contiguous,
    writable) for a device array, ``array`` itself otherwise."""
    if on_device(array):
        return CPU_BACKEND.asarray(array)
    return array


def copy_into(dest, values):
    """Write host ``values`` (any shape with ``dest``'s size) into device array ``dest`` in
    place, cast to ``dest``'s dtype on the host (float16 arrives as float32 from the wire)
    so one host-to-device copy of the final bytes is made."""
    host = values.reshape(dest.shape).astype(dest.dtype, copy=False)
    dest[...] = backend_of(dest).asarray(host)
