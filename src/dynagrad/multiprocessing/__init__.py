"""``dynagrad.multiprocessing``: PyTorch's ``torch.multiprocessing``.

The standard library's ``multiprocessing`` API (``Process``, ``Queue``, ``SimpleQueue``,
``Pool``, ``Pipe``, ``Manager``, ``get_context``, ``set_start_method``, ``cpu_count``,
...), re-exported as is, where dynagrad tensors travel through shared memory instead of
being pickled (see ``dynagrad.multiprocessing.reductions``); ``spawn`` and
``start_processes``; ``Tensor.share_memory_()`` / ``is_shared()`` and
``Module.share_memory()`` for training one model from several processes (Hogwild)::

    model.share_memory()
    workers = [mp.Process(target=train, args=(model,)) for _ in range(4)]

With ``fork``, the children inherit the parent's state as it is: dynagrad's default
generator too, so they draw the same random numbers unless each reseeds (as PyTorch).
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .. import _platform
from . import reductions  # noqa: F401
from .reductions import register_tensor_types
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,  # noqa: F401
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ['set_sharing_strategy', 'get_sharing_strategy', 'get_all_sharing_strategies',
           'init_reductions', 'spawn', 'start_processes', 'ProcessContext', 'SpawnContext',
           'ProcessRaisedException', 'ProcessExitedException']
__all__ += multiprocessing.__all__

_STRATEGIES = ('file_descriptor', 'file_system')
_strategy = 'file_descriptor'


def set_sharing_strategy(new_strategy):
    """Accepted for PyTorch programs ('file_system' is what they set to avoid running out
    of descriptors). dynagrad sends descriptors of nameless memory files either way; a
    received DataLoader batch keeps none of its own open, only its mapping's."""
    global _strategy
    if new_strategy not in _STRATEGIES:
        raise AssertionError(f'invalid sharing strategy {new_strategy!r}, expected one of '
                             f'{get_all_sharing_strategies()}')
    _strategy = new_strategy


def get_sharing_strategy():
    return _strategy


def get_all_sharing_strategies():
    return set(_STRATEGIES)


def init_reductions():
    """Register dynagrad's tensor pickling with ``multiprocessing`` (done at import)."""
    register_tensor_types()


def _share_module_memory(self):
    """Move every parameter and buffer (and gradient) into shared memory; returns self."""
    seen = set()
    for t in list(self.parameters()) + list(self.buffers()):
        for x in (t, t.grad if t.is_leaf else None):
            if x is not None and id(x) not in seen:
                seen.add(id(x))
                x.share_memory_()
    return self


def _declare_module_share_memory():
    from ..nn.module import Module
    if 'share_memory' not in Module.__dict__:
        Module.share_memory = _share_module_memory
        _share_module_memory.__name__ = _share_module_memory.__qualname__ = 'share_memory'


# Changes how ForkingPickler pickles dynagrad's own Tensor types (reducers are looked up by
# exact type) and nothing else in the process; see reductions.register_tensor_types.
register_tensor_types()
_declare_module_share_memory()

if _platform.lacks_processes():
    # There (Pyodide) the standard library's classes fail far from the user's call, with
    # ModuleNotFoundError('_multiprocessing') or ENOSYS; these stand-ins fail at the call
    # and say why. They stay classes so that a program subclassing Process still imports.
    def _stand_in(name):
        def refuse(self, *args, **kwargs):
            _platform.require_processes(f'dynagrad.multiprocessing.{name}')
        return type(name, (), {'__init__': refuse, '__module__': __name__})

    for _name in ('Process', 'Pool', 'Queue', 'SimpleQueue', 'JoinableQueue', 'Pipe',
                  'Manager', 'Lock', 'RLock', 'Semaphore', 'BoundedSemaphore', 'Event',
                  'Condition', 'Barrier', 'Value', 'Array'):
        globals()[_name] = _stand_in(_name)
