"""What the ``dynagrad.backends`` modules share: flags PyTorch type-checks on assignment
(``cudnn.benchmark = 1`` raises, as in PyTorch), and the float32 matmul precision."""
import contextlib
import sys
import types
import warnings


class BoolFlag:
    """A module attribute that only takes a bool; ``setter`` names PyTorch's check."""

    def __init__(self, default, setter):
        self.value = default
        self.setter = setter

    def __get__(self, module, cls=None):
        return self if module is None else self.value

    def __set__(self, module, value):
        self.value = check_bool(value, self.setter)


def check_bool(value, setter):
    if not isinstance(value, bool):
        raise RuntimeError(f'{setter} expects a bool, but got {type(value).__name__}')
    return value


def flag_module(name, **flags):
    """Give module ``name`` the typed ``flags`` (name -> BoolFlag) as attributes."""
    module = sys.modules[name]
    cls_name = name.rsplit('.', 1)[-1].capitalize() + 'Module'      # CudnnModule, as torch
    module.__class__ = type(cls_name, (types.ModuleType,), dict(flags, __module__=name))
    return module


@contextlib.contextmanager
def set_flags(module, **values):
    """Set ``module``'s flags inside the block, then put the old values back."""
    old = {k: getattr(module, k) for k in values}
    try:
        for k, v in values.items():
            setattr(module, k, v)
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)


# -- float32 matmul precision ------------------------------------------------------------

_PRECISIONS = ('highest', 'high', 'medium')


class _Precision:
    value = 'highest'


_precision = _Precision()


def set_float32_matmul_precision(precision):
    """PyTorch's permission to run float32 matmuls in TF32/bfloat16 on hardware that has
    them. NumPy always computes float32 matmuls in float32, so only the setting is kept
    (``backends.cuda.matmul.allow_tf32`` reads it, as in PyTorch)."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      'set_float32_matmul_precision call has no effect.', UserWarning,
                      stacklevel=2)
        return
    _precision.value = precision


def get_float32_matmul_precision():
    return _precision.value
