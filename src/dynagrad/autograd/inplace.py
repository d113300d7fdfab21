"""What an in-place op (``Op.apply_``) adds to the mechanism: the refusals PyTorch makes
before a write (a leaf that requires grad, a view among several, a conjugated copy, a result
that does not fit), the saved value of the target taken before it is overwritten, the write
through an expanded view, and the rewrite of the target's history afterwards."""
import numpy as np

from .. import _dtype
from ..backend import writable_alias, xp
from ..tensor import Tensor
from .outputs import refuse_saved_inference

_ndarray = np.ndarray


def conj_write_error(cls):
    """The refusal of a write into a conj() result, which dynagrad makes a copy."""
    return RuntimeError(
        f'{cls._node_name[:-9].lower()}_: dynagrad cannot write into the result of '
        'conj(): it is a conjugated copy, not a view of its source as in PyTorch, so '
        'the write would not reach the source. Write into x.conj_physical() or '
        'x.resolve_conj(), or conjugate after the write.')


def check_inplace_allowed(target):
    multi = target._multi_view_of
    if multi is not None:
        raise RuntimeError(
            f'Output {target._output_nr} of {multi} is a view and is being modified inplace. '
            'This view is the output of a function that returns multiple views. Such functions '
            'do not allow the output views to be modified inplace. You should replace the '
            'inplace operation by an out-of-place one (or .clone() the output first).')
    if target._grad_fn is None:
        raise RuntimeError('a leaf Variable that requires grad is being used in an in-place '
                           'operation. (Wrap the update in `with dynagrad.no_grad():`, as '
                           'optimizers do, or operate on a .clone().)')
    base = target._base
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError('a view of a leaf Variable that requires grad is being used in an '
                           'in-place operation. (Wrap the update in `with dynagrad.no_grad():`, '
                           'or operate on a .clone().)')


def check_inplace_result(cls, target, result):
    tdata = target._data
    if result.shape != tdata.shape:
        raise RuntimeError(
            f'{cls._node_name[:-9].lower()}_: output with shape {list(tdata.shape)} doesn\'t '
            f'match the broadcast shape {list(result.shape)}')
    if result.dtype != tdata.dtype:
        rd, td = _dtype.FROM_NUMPY[result.dtype], _dtype.FROM_NUMPY[tdata.dtype]
        if rd.category > td.category:
            raise RuntimeError(
                f"result type {_TYPE_NAMES[rd.category]} can't be cast to the desired output "
                f'type {td.legacy_name[:-6]}')


_TYPE_NAMES = {0: 'Bool', 1: 'Long', 2: 'Float', 3: 'ComplexFloat'}


def inputs_saved_before_write(node, target, others, inputs, arrays):
    """The inputs the op's saved values resolve against: a saved value of the target must be
    its value before the write, so the target is copied (in ``arrays`` and ``node._saved``
    too) when the op saved it. Refuses saved inference tensors first."""
    refuse_saved_inference(node._saved, inputs, arrays)
    if not any(s is arrays[0] for s in node._saved):
        return (target,) + others
    old = Tensor._make(target._data.copy(), target._requires_grad,
                       target._grad_fn, target._output_nr, None, Tensor)
    arrays[0] = old._data
    node._saved = tuple(old._data if s is target._data else s for s in node._saved)
    return (old,) + others


def rebase_history(target, node):
    """After an in-place op recorded ``node``, make it ``target``'s history."""
    base = target._base
    if base is None:
        target._grad_fn = node
        target._output_nr = 0
        target._requires_grad = True
        return
    from .views import CopySlices, replay_view  # views.py builds on this module
    copy_node = CopySlices._make(base, target._view_fn, node)
    base._grad_fn = copy_node
    base._output_nr = 0
    base._requires_grad = True
    regenerated = replay_view(base, target._view_fn)
    target._grad_fn = regenerated._grad_fn
    target._output_nr = regenerated._output_nr
    target._requires_grad = True



OVERLAP_ERROR = ('unsupported operation: more than one element of the written-to tensor '
                 'refers to a single memory location. Please clone() the tensor before '
                 'performing the operation.')


def has_internal_overlap(array):
    """Whether elements of ``array`` share memory: a stride 0 over a size above 1 (what an
    expanded tensor has; torch's has_internal_overlap)."""
    return any(st == 0 and n > 1 for n, st in zip(array.shape, array.strides))


def write_region(region, values):
    """``region[...] = values`` where ``region`` is a view of a fresh array taken as a view
    of a tensor was (CopySlices' backward): through an expanded view that NumPy keeps
    read-only, and refused as in torch where its elements share memory."""
    try:
        region[...] = values
    except ValueError:
        if region.__class__ is not _ndarray or region.flags.writeable:
            raise
        if has_internal_overlap(region):
            raise RuntimeError(OVERLAP_ERROR) from None
        writable_alias(region)[...] = values


def write_overlapping(cls, target, result):
    """Write ``result`` into ``target``, a read-only view of an expanded tensor (NumPy keeps
    those read-only). Where its elements share memory (a stride 0 over a size above 1,
    torch's internal overlap), torch refuses most ops (``OVERLAP_ERROR``); those that say
    ``overlapping_write`` (fill_, index_put_...) write the elements they change through the
    shared memory, the deprecated ones with torch's warning. A view without overlap (a row
    of an expanded tensor) is written through like any other."""
    old = target._data
    alias = writable_alias(old)
    overlap = has_internal_overlap(old)
    if alias is None or overlap and cls.overlapping_write is None:
        raise RuntimeError(OVERLAP_ERROR)
    if not overlap:
        alias[...] = result
        return
    if cls.overlapping_write != 'silent':
        import warnings
        name, example = cls.overlapping_write
        warnings.warn(f'Use of {name} on expanded tensors is deprecated. Please clone() the '
                      'tensor before performing this operation. This also applies to advanced '
                      f'indexing e.g. {example}', UserWarning, stacklevel=4)
    changed = result != old
    if result.dtype.kind in 'fc':
        changed &= ~(xp.isnan(result) & xp.isnan(old))
    alias[changed] = result[changed]

