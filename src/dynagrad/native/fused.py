"""Kernels ``dynagrad.compile`` generates: one numba module per fused region of a program.

The compiler writes each region's kernels as Python source (``compiler/native_codegen.py``);
this module turns the text into functions. numba's on-disk cache (``cache=True``) only
works for functions defined in a file it can find again, so the source is written to a
file named by its hash in a cache directory and imported from there: a second process (or
a second program with the same region) finds both the file and numba's machine code next
to it and skips compiling. The hash also covers ``_math.py`` and ``elementwise.py``, whose
functions the kernels call: editing them gives new files rather than stale machine code.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile
import warnings

_loaded = {}        # source hash -> module
_directory = []     # the cache directory, found once


def _math_version():
    digest = hashlib.sha1()
    for name in ('_math.py', 'elementwise.py'):
        with open(os.path.join(os.path.dirname(__file__), name), 'rb') as f:
            digest.update(f.read())
    return digest.hexdigest()[:16]


MATH_VERSION = _math_version()


def cache_directory():
    """Where generated kernels are written: ``DYNAGRAD_CACHE_DIR``, else the user's cache
    (``$XDG_CACHE_HOME/dynagrad/fused``), else the temporary directory."""
    if _directory:
        return _directory[0]
    candidates = []
    if os.environ.get('DYNAGRAD_CACHE_DIR'):
        candidates.append(os.path.join(os.environ['DYNAGRAD_CACHE_DIR'], 'fused'))
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    candidates.append(os.path.join(base, 'dynagrad', 'fused'))
    candidates.append(os.path.join(tempfile.gettempdir(), f'dynagrad-fused-{os.getuid()}'
                                   if hasattr(os, 'getuid') else 'dynagrad-fused'))
    for path in candidates:
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            _directory.append(path)
            return path
    raise OSError('no writable directory for compiled kernels (set DYNAGRAD_CACHE_DIR)')


def load_kernels(source, kernels, dtype):
    """The functions of ``source`` (a module's text) named in ``kernels`` (name -> number of
    arguments, each a flat C-contiguous array of ``dtype``; or the dtype names of its flat C
    arrays one by one: a mask's ``bool``, a loop nest's ``int64`` extents), compiled for
    those arguments now (or loaded from numba's cache), so that a kernel numba refuses
    fails here, where the caller can keep its NumPy code, and not in the middle of a call."""
    digest = hashlib.sha1(f'{MATH_VERSION}\n{source}'.encode()).hexdigest()[:24]
    module = _loaded.get(digest)
    if module is None:
        module_name = f'dynagrad_fused_{digest}'
        path = os.path.join(cache_directory(), module_name + '.py')
        if not os.path.exists(path):
            # written whole, then renamed: a process reading it never sees half a file
            fd, partial = tempfile.mkstemp(dir=os.path.dirname(path), suffix='.tmp')
            with os.fdopen(fd, 'w') as f:
                f.write(source)
            os.replace(partial, path)
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module       # numba's cache finds functions by module
        spec.loader.exec_module(module)
        _loaded[digest] = module
    from numba import types
    from numba.core.errors import NumbaIRAssumptionWarning
    def array(name):
        return types.Array(types.boolean if name == 'bool' else getattr(types, name), 1, 'C')
    found = {}
    for name, arguments in kernels.items():
        if isinstance(arguments, int):
            arguments = (dtype,) * arguments
        function = getattr(module, name)
        with warnings.catch_warnings():
            # _math's functions inlined at several calls trip a pedantic check of numba's
            # (a name out of scope in its SSA pass) that changes nothing compiled
            warnings.simplefilter('ignore', NumbaIRAssumptionWarning)
            function.compile(tuple(array(a) for a in arguments))
        found[name] = function
    return found
