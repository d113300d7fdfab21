"""What becomes of an op's results: output tensors (several for a tuple; views sharing their
source's storage), the arrays the op saved resolved to the tensors they are (so their
versions are checked at backward), and the shapes and dtypes gradients are fitted to."""
import numpy as np

from .._device import DEVICE_ARRAY_TYPES, on_backends_changed
from ..tensor import INFERENCE_COUNTER, Tensor, inference_blocks
from .device_dispatch import as_array, is_data_array
from .grad_mode import state as _grad_state
from .graph import SavedTensor, real_grad_as

_ndarray = np.ndarray


def sum_to(g, shape):
    """Sum ``g`` (array or tensor) over the dimensions broadcasting added to reach it from
    ``shape``: the gradient of a broadcast input."""
    if g.shape == shape:
        return g
    if g.ndim < len(shape):  # shape has extra leading size-1 dims (copy_ drops them)
        return g.reshape(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = g.sum(axes)
    return g.reshape(shape)



INFERENCE_SAVE_ERROR = (
    'Inference tensors cannot be saved for backward. Please do not use Tensors created in '
    'inference mode in computation tracked by autograd. To work around this, you can make a '
    'clone to get a normal tensor and use it in autograd, or use `dynagrad.no_grad()` '
    'instead of `dynagrad.inference_mode()`.')


def refuse_saved_inference(saved, inputs, arrays):
    """Raise PyTorch's error when an op recording a graph saved an inference tensor."""
    for s in saved:
        for x, a in zip(inputs, arrays):
            if s is a and isinstance(x, Tensor) and x._vc_slot is INFERENCE_COUNTER:
                raise RuntimeError(INFERENCE_SAVE_ERROR)



def make_view(out, source, cls, params, index=None):
    """Record that ``out`` views ``source``: one storage, one version counter.

    ``_view_fn`` says how to take the view again from the base: the view ops with their
    parameters (and which output, for ops that return several views).
    """
    out._vc_slot = source._vc     # the slot itself: the property's setter costs a call
    base = source._base
    step = ((cls, params, index),)
    if base is None:
        out._base = source
        out._view_fn = step
    else:
        out._base = base
        out._view_fn = source._view_fn + step



def input_meta(inputs, arrays, out_shape, cast):
    """Shapes and dtypes to fit gradients to, only when some input differs from the output."""
    need = cast
    if not need:
        for a in arrays:
            if is_data_array(a) and a.shape != out_shape:
                need = True
                break
    if not need:
        return None
    return tuple((x._data.shape, x._data.dtype) if isinstance(x, Tensor) else None
                 for x in inputs)


def fit_grad(g, meta):
    """A gradient fitted to its input's shape (summed over broadcast dims) and dtype."""
    if g is None or meta is None:
        return g
    shape, dtype = meta
    if g.shape != shape:
        g = sum_to(g, shape)
    return real_grad_as(g, dtype)


# What else an op may save that is a value of its inputs or outputs: NumPy scalars, and the
# arrays of registered devices (kept current by the device registry). One isinstance test,
# as cheap as the test for NumPy scalars alone.
_SAVED_VALUE_TYPES = (np.generic,)


def _saved_value_types_changed():
    global _SAVED_VALUE_TYPES
    _SAVED_VALUE_TYPES = (np.generic,) + tuple(DEVICE_ARRAY_TYPES)


on_backends_changed(_saved_value_types_changed)


def resolve_saved(saved, inputs, arrays, out, outputs):
    """Turn the arrays an op saved into SavedTensors tied to the inputs or outputs they are.

    ``out`` is what forward returned (an array, a NumPy scalar, or a tuple of them) and
    ``outputs`` the tensor or tensors made of it.
    """
    single = outputs.__class__ is not tuple
    resolved = []
    for s in saved:
        if s.__class__ is _ndarray or isinstance(s, _SAVED_VALUE_TYPES):
            if single and s is out:
                s = SavedTensor(outputs._data, None, outputs._vc, 0)
            else:
                for i, a in enumerate(arrays):
                    if s is a:
                        x = inputs[i]
                        if isinstance(x, Tensor):
                            vc = x._vc
                            if vc is INFERENCE_COUNTER:
                                raise RuntimeError(INFERENCE_SAVE_ERROR)
                            s = SavedTensor(s, x, vc)
                        break
                else:
                    if not single:
                        for k, o in enumerate(out):
                            if s is o:
                                t = outputs[k]
                                s = SavedTensor(t._data, None, t._vc, t._output_nr)
                                break
        resolved.append(s)
    return tuple(resolved)


def wrap_outputs(node, inputs, arrays, out, record, out_cls, params):
    """Tensors for an op with several outputs; integer outputs never require grad."""
    arrays_out = tuple(o if o.__class__ is _ndarray else as_array(o) for o in out)
    if record:
        node.input_meta = input_meta(inputs, arrays, arrays_out[0].shape, None)
        node._output_meta = tuple((o.shape, o.dtype) for o in arrays_out)
    # made inside inference_mode: inference tensors (views take their source's kind below)
    vc = (INFERENCE_COUNTER if inference_blocks.open and _grad_state.inference
          and not _grad_state.grad_enabled else None)
    tensors = []
    for k, o in enumerate(arrays_out):
        diff = record and o.dtype.kind in 'fVc'     # 'V': ml_dtypes' bfloat16
        t = Tensor._make(o, diff, node if diff else None, k if diff else 0, vc, out_cls)
        if node.is_view:
            make_view(t, inputs[0], type(node), params, k)
            if diff:
                t._multi_view_of = node.name()
        tensors.append(t)
    tensors = tuple(tensors)
    if record and node._saved:
        node._saved = resolve_saved(node._saved, inputs, arrays, out, tensors)
    return tensors

