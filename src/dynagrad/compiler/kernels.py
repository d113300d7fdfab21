"""The ops generated code writes inline: the hot elementwise ones, as the NumPy expressions
their forward and backward compute (the same ufuncs, so a replay stays bit for bit
eager's). An op is inlined only where its step needs nothing more: no dtype cast, no
parameter but the default, not in place, real values, one output.

Each entry: the forward expression over the inputs ``{0}``, ``{1}``...; the same ufunc
writing into a buffer ``{out}`` (NumPy's positional ``out``: a chain of elementwise ops then
runs in one buffer, see program.py); and per input the gradient expression over ``{g}``
(the output's gradient), the inputs and ``{y}`` (the output).
"""
import re

from ..backend import xp
from ..nn.functional.linear import LinearOp
from ..ops import arithmetic, linalg_products, unary

INLINE = {
    arithmetic.Add: ('{0} + {1}', '_add({0}, {1}, {out})', ('{g}', '{g}')),
    arithmetic.Sub: ('{0} - {1}', '_subtract({0}, {1}, {out})', ('{g}', '-{g}')),
    arithmetic.Mul: ('{0} * {1}', '_multiply({0}, {1}, {out})', ('{g} * {1}', '{g} * {0}')),
    unary.Neg: ('-{0}', '_negative({0}, {out})', ('-{g}',)),
    unary.Tanh: ('_tanh({0})', '_tanh({0}, {out})', ('{g} * (1 - {y} * {y})',)),
    unary.Relu: ('_maximum({0}, 0)', '_maximum({0}, 0, out={out})',
                 ('{g} * _logical_not({y} <= 0)',)),
}

NAMESPACE = {'_tanh': xp.tanh, '_maximum': xp.maximum, '_logical_not': xp.logical_not,
             '_add': xp.add,
             '_subtract': xp.subtract, '_multiply': xp.multiply, '_negative': xp.negative}

# Ops whose result is always a new array that their node does not keep: an inlined op may
# write into it once nothing else reads it.
FRESH = tuple(INLINE) + (LinearOp, linalg_products.Matmul)     # and their named variants

# Families whose ops compute only from their inputs and parameters (no state moved, nothing
# written elsewhere): two of them with the same inputs and parameters are one.
PURE_MODULES = frozenset('dynagrad.' + m for m in (
    'ops.arithmetic', 'ops.unary', 'ops.pointwise', 'ops.comparison', 'ops.clamping',
    'ops.reduction', 'ops.ordering', 'ops.shape', 'ops.linalg_products', 'ops.special', 'ops.statistics',
    'nn.functional.linear', 'nn.functional.activation'))

_PLACEHOLDER = re.compile(r'{(\d+|y)}')


def reads(template):
    """The placeholders a gradient template reads: input indices, and 'y' (the output)."""
    return [p if p == 'y' else int(p) for p in _PLACEHOLDER.findall(template)]


def inline_kernel(step):
    """The step's (forward, gradients) templates, or None when it must call the op."""
    kernel = INLINE.get(step.cls)
    if kernel is None or step.multi or step.inplace or not step.real:
        return None
    if any(c is not None for c in step.casts):
        return None
    if step.params and set(step.params) != {'alpha'} or step.params.get('alpha', 1) != 1:
        return None
    return kernel
