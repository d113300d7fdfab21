"""float16 and bfloat16 computed in float32 and rounded once per op, as PyTorch's CPU
kernels do: ``widened(cls, dtype)`` is the op's variant that does it, same node name.
``promotion.promote`` hands it to ``Op.apply``, which runs it in the op's place."""
import numpy as np

from .. import _dtype
from ..backend import xp
from ..tensor import Tensor, wrap
from .device_dispatch import is_data_array

_F32 = np.dtype(np.float32)

_WIDENED = {}   # (op class, NumPy low dtype) -> its widened variant


def widened(cls, low):
    """``cls`` computing in float32 on inputs of the 2-byte float dtype ``low`` and rounding
    its float results to ``low``: PyTorch's CPU kernels for float16 and bfloat16 compute in
    float ("opmath") and round the result once. A subclass made once per op and dtype,
    recording the same node name."""
    variant = _WIDENED.get((cls, low))
    if variant is None:
        variant = type(cls.__name__, (Widened, cls), {
            'node_name': cls._node_name, '__module__': cls.__module__,
            '__qualname__': cls.__qualname__, '__doc__': cls.__doc__, '_low': low})
        variant._casts = 0     # its forward does the casting
        _WIDENED[(cls, low)] = variant
    return variant


def _round_to(value, low):
    """A float32 result rounded to ``low``; anything else (indices, masks) unchanged."""
    if getattr(value, 'dtype', None) == _F32:
        return xp.asarray(value).astype(low)
    return value


class Widened:
    """What a widened variant adds to its op (see ``widened``); placed before the op in the
    bases, so ``super()`` is the op itself."""
    _low = None

    def forward(self, *arrays, **params):
        low = self._low
        to_common = self.promotes or self.float_result
        wide = []
        for i, a in enumerate(arrays):
            exact = i == 1 and self.scalar_opmath
            if is_data_array(a):
                if a.dtype.char in 'eE':
                    if a.dtype != low:    # float16 meeting a bfloat16 result: PyTorch casts first
                        a = a.astype(low)
                    a = a.astype(_F32)
                elif to_common:         # other inputs are cast to the common dtype first
                    a = a.astype(_F32) if exact and a.ndim == 0 else a.astype(low).astype(_F32)
            elif to_common and (a.__class__ is float or a.__class__ is int):
                a = float(a) if exact else float(low.type(a))   # (x + 1.001 is x in bfloat16)
            wide.append(a)
        self._in_dtypes = tuple(a.dtype if is_data_array(a) else None for a in arrays)
        for name in self.scalar_params:
            v = params.get(name)
            if v.__class__ is float or v.__class__ is int:
                params[name] = float(low.type(v))
        out = super().forward(*wide, **params)
        if params.get('dtype') is not None:     # an explicit result dtype is kept
            result = out
        elif out.__class__ is tuple:
            result = tuple(_round_to(o, low) for o in out)
        else:
            result = _round_to(out, low)
        saved = self._saved
        if saved:
            self._saved = tuple(_saved_original(s, wide, arrays, out, result) for s in saved)
        return result

    def _unpack_saved(self, as_tensor):
        values = super()._unpack_saved(as_tensor)
        return [_widen_value(v) for v in values]

    def _run_backward(self, grads, as_tensors):
        metas = self._output_meta
        grads = tuple(_widen_value(g) if g is not None or metas is None or metas[k] is None
                      else xp.zeros(metas[k][0], _F32) if not as_tensors
                      else wrap(xp.zeros(metas[k][0], _F32))
                      for k, g in enumerate(grads))
        result = super()._run_backward(grads, as_tensors)
        return tuple(_narrow_grad(g, d) for g, d in zip(result, self._in_dtypes))


def _saved_original(s, wide, arrays, out, result):
    """What a widened op saved, as the value its graph knows: a float32 copy of an input is
    saved as that input (so its version is checked), a float32 output as the rounded output
    (as PyTorch saves it); both are widened again when unpacked."""
    if not is_data_array(s):
        return s
    for w, a in zip(wide, arrays):
        if s is w:
            return a
    if s is out:
        return result
    if out.__class__ is tuple:
        for o, r in zip(out, result):
            if s is o:
                return r
    return s


def _widen_value(v):
    if is_data_array(v):
        return v.astype(_F32) if v.dtype.char in 'eE' else v
    if isinstance(v, Tensor) and v._data.dtype.char in 'eE':
        return v.to(_dtype.float32)
    return v


def _narrow_grad(g, dtype):
    if g is None or dtype is None:
        return g
    if is_data_array(g):
        return g if g.dtype == dtype else g.astype(dtype)
    if isinstance(g, Tensor):
        return g if g._data.dtype == dtype else g.to(_dtype.FROM_NUMPY[dtype])
    return g
