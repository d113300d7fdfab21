"""``dynagrad.utils.hooks``: the handle hooks are registered with, as ``torch.utils.hooks``
(libraries keep hook tables of their own and hand these out: accelerate does)."""
import warnings

from ..autograd.graph import RemovableHandle

__all__ = ['RemovableHandle', 'unserializable_hook', 'warn_if_has_hooks']


def unserializable_hook(f):
    """Mark ``f`` as a hook that is not saved with its tensor, without a warning."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each gradient hook of ``tensor`` (a leaf's) that saving it would drop."""
    hooks = getattr(tensor, '_hooks', None) or {}
    for hook in hooks.values():
        if not getattr(hook, '__torch_unserializable__', False):
            warnings.warn(f'backward hook {hook!r} on tensor will not be serialized.  If this '
                          'is expected, you can decorate the function with '
                          '@torch.utils.hooks.unserializable_hook to suppress this warning')
