"""``torch._dynamo.config``: PyTorch's settings, with their defaults, for the programs that
read or set them. Only ``cache_size_limit`` (``recompile_limit``) has a meaning for
dynagrad's compile, which keeps its own limit of the same default (8); the others are kept
so that setting one and reading it back works, and an unknown name raises, as in PyTorch.
"""
import contextlib
import sys
import types

_DEFAULTS = {
    'suppress_errors': False, 'cache_size_limit': 8, 'recompile_limit': 8,
    'accumulated_cache_size_limit': 256, 'accumulated_recompile_limit': 256,
    'capture_scalar_outputs': False, 'capture_dynamic_output_shape_ops': False,
    'verbose': False, 'optimize_ddp': True, 'automatic_dynamic_shapes': True,
    'assume_static_by_default': True, 'inline_inbuilt_nn_modules': True,
    'force_parameter_static_shapes': True, 'guard_nn_modules': True,
    'allow_unspec_int_on_nn_module': False, 'specialize_int': False,
    'specialize_float': False, 'dynamic_shapes': True, 'use_single_step_graph': False,
    'error_on_recompile': False, 'skip_nnmodule_hook_guards': True,
    'force_unspec_int_unbacked_size_like_on_torchrec_kjt': False,
    'raise_on_ctx_manager_usage': True,
}


class _Config(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f'torch._dynamo.config.{name} does not exist')

    def __setattr__(self, name, value):
        if name not in _DEFAULTS and not name.startswith('__'):
            raise AttributeError(f'torch._dynamo.config.{name} does not exist')
        super().__setattr__(name, value)

    def patch(self, arg=None, **changes):
        """A context manager (and decorator) that sets the named options for its block."""
        if arg is not None:
            changes = dict(arg, **changes) if isinstance(arg, dict) else {arg: changes.pop('value')}
        return _patch(self, changes)

    def get_config_copy(self):
        return {name: getattr(self, name) for name in _DEFAULTS}

    def to_dict(self):
        return self.get_config_copy()


@contextlib.contextmanager
def _patch(module, changes):
    for name in changes:
        if name not in _DEFAULTS:
            raise AttributeError(f'torch._dynamo.config.{name} does not exist')
    before = {name: getattr(module, name) for name in changes}
    for name, value in changes.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
