"""Platforms where CPython runs without processes or threads: Pyodide (CPython compiled to
WebAssembly for the browser and Node.js, ``sys.platform == 'emscripten'``) and WASI.

There, what PyTorch would do with worker processes or threads degrades the way it does
on a machine with one core (``set_num_threads`` is a no-op, ``DataLoader`` loads in the main
process), and what cannot degrade (starting processes, the MPI launcher) raises an error
that names the platform instead of a ``ModuleNotFoundError`` from deep in the standard
library. ``sys.platform`` is read on each call so tests can stand in for the platform.
"""
import sys

_NAMES = {'emscripten': 'emscripten (Pyodide: CPython compiled to WebAssembly)',
          'wasi': 'wasi (CPython compiled to WebAssembly)'}


def lacks_processes():
    """True where this Python cannot start processes or threads."""
    return sys.platform in _NAMES


def name():
    return _NAMES.get(sys.platform, sys.platform)


def no_processes_message(what):
    return (f'{what} needs processes, which this platform, {name()}, does not have: it '
            f'runs one process with one thread. Run it under native CPython.')


def require_processes(what):
    if lacks_processes():
        raise RuntimeError(no_processes_message(what))
