"""``skip_init``: build a module without its default initialization pass."""
import inspect

__all__ = ['skip_init']


def skip_init(module_cls, *args, **kwargs):
    """Instantiate ``module_cls(*args, **kwargs)``; its class must take a ``device``
    argument, as in PyTorch. dynagrad builds parameters directly in CPU memory, so the
    values are whatever the constructor gives them: treat them as uninitialized and set
    them before use."""
    if 'device' not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop('device', 'cpu')
    kwargs['device'] = final_device
    return module_cls(*args, **kwargs)
