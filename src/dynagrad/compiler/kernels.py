"""The ops generated code writes inline: the hot elementwise ones, as the NumPy expressions
their forward and backward compute (the same expressions, so a replay stays bit for bit
eager's). An op is inlined only where its step needs nothing more: no dtype cast, no
parameter but the default, not in place, real values, one output.

Each entry: the forward expression over the inputs ``{0}``, ``{1}``...; and per input the
gradient expression over ``{g}`` (the output's gradient), the inputs and ``{y}`` (the
output).
"""
from ..backend import xp
from ..ops import arithmetic, unary

INLINE = {
    arithmetic.Add: ('{0} + {1}', ('{g}', '{g}')),
    arithmetic.Sub: ('{0} - {1}', ('{g}', '-{g}')),
    arithmetic.Mul: ('{0} * {1}', ('{g} * {1}', '{g} * {0}')),
    unary.Neg: ('-{0}', ('-{g}',)),
    unary.Tanh: ('_tanh({0})', ('{g} * (1 - {y} * {y})',)),
    unary.Relu: ('_maximum({0}, 0)', ('{g} * ({y} > 0)',)),
}

NAMESPACE = {'_tanh': xp.tanh, '_maximum': xp.maximum}


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
