"""The declarative op-conformance table: one ``OpInfo`` row per op.

In the spirit of PyTorch's OpInfo and Chainer's op tests: a row names the op, how to call
it on a library (``dynagrad`` or ``torch``: the same callable runs on both), its method
and in-place forms, a generator of sample inputs, flags, and bad inputs with the
exception type both libraries must raise. ``tests/ops/test_conformance.py`` checks every
row the same way against torch. Adding an op means adding a row here.

Sample arguments are NumPy arrays (they become tensors of both libraries, float ones
requiring grad), ``NC(array, view)`` for a non-contiguous input (a leaf of ``array``'s
shape seen through ``view``, e.g. a transpose or a strided slice), or anything else
(Python scalars, dims, keys), which is passed as is; arrays nested in tuples or lists
(indexing keys) become tensors that do not require grad.
"""
from ._core import *  # noqa: F401,F403
from ._core import KNOWN_BUGS, STATS  # noqa: F401
from . import pointwise, reduction, linalg, shape, indexing, statistics, special, spectral
from . import nn_linear_conv, nn_pooling_vision, nn_activation_norm, nn_loss_attention

# One module per op family, as in src/dynagrad/ops: a new op adds a row to its family.
OPS = (pointwise.OPS + reduction.OPS + linalg.OPS + shape.OPS + indexing.OPS
       + nn_linear_conv.OPS + nn_pooling_vision.OPS + nn_activation_norm.OPS
       + nn_loss_attention.OPS + statistics.OPS + special.OPS + spectral.OPS)

OP_BY_NAME = {op.name: op for op in OPS}
assert len(OP_BY_NAME) == len(OPS), 'op names must be unique'
