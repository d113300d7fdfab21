"""Batching rules: how each op runs once on a batch under ``vmap``.

A batched tensor's physical tensor carries one leading dim per ``vmap`` level it is
batched over (``autograd/batched.py``). A rule lines up the inputs' batch dims (``lift``:
a size-1 dim for a level an input lacks, so broadcasting does the rest), rewrites the
op's dim-like parameters past the batch dims, runs the op itself on the physical tensors
and marks the result batched. The rules come by family, so most ops need only a row in
``RULES`` (or none: every subclass of ``Unary``, ``Binary`` and the comparisons is
elementwise):

- ``elementwise``: broadcasting ops; the batched inputs' per-sample dims are padded to a
  common rank so the batch dims stay leftmost.
- ``dims(*names)``: ops with dim parameters (reductions, softmax, cumsum, transpose...):
  each dim moves past the batch dims, ``None`` ("all dims") becomes every per-sample dim.
- ``merge``: ops whose first per-sample dim is itself a batch (pooling, the input of a
  convolution): the vmap batch joins it, then is split off again.
- one function for the ops whose parameters are shapes or keys (view, expand, indexing),
  for matmul, linear, convolution with a batched weight (the groups trick), and losses
  (computed per element, reduced per sample).

``loop`` is the rule of last resort: the op once per sample, results stacked (what
PyTorch's vmap does for an op with no batching rule, with the same performance warning).
``FUNCTION_RULES`` covers the few public functions that read their inputs' arrays before
they reach an op (normalisations' statistics, losses' target checks), named by
``@vmap_function`` where each function is defined.
"""
import inspect
import math
import sys
import warnings

from .. import ops as _ops, _dtype
from ..autograd.batched import BatchedTensor, batched, state as _state
from ..autograd.function import Op
from ..ops import shape as _shape, reduction as _reduction, indexing as _indexing
from ..ops import ordering as _ordering
from ..ops import arithmetic as _arith, clamping as _clamping, linalg_products as _lp
from ..ops import linalg_decompositions as _ld, linalg_norms as _ln, random as _random
from ..ops import strided as _strided, special as _special, creation as _creation
from ..ops import conversion as _conversion, spectral as _spectral, linalg_eig as _eig
import dynagrad.nn.functional  # noqa: F401  (the modules below, not its functions)
_act, _attn, _conv, _dist, _drop, _lin, _loss, _norm, _pool, _vision = (
    sys.modules[f'dynagrad.nn.functional.{name}'] for name in (
        'activation', 'attention', 'conv', 'distance', 'dropout', 'linear', 'loss',
        'normalization', 'pooling', 'vision'))
from ..tensor import Tensor


# -- lining inputs up -----------------------------------------------------------------------

def _levels(x):
    return x._levels if x.__class__ is BatchedTensor else ()


def union(values):
    """The levels any of ``values`` (tensors, or lists of them) is batched over, in order."""
    found = set()
    for v in values:
        if v.__class__ is BatchedTensor:
            found.update(v._levels)
        elif v.__class__ in (tuple, list):
            found.update(union(v))
    return tuple(sorted(found))


def sizes_of(values, levels):
    """The batch size of each level, read from the tensors batched over it."""
    got = {}
    for v in values:
        if v.__class__ is BatchedTensor:
            for lvl, n in zip(v._levels, v._phys.shape):
                got[lvl] = n
        elif v.__class__ in (tuple, list):
            got.update(zip(levels, sizes_of(v, levels)) if union(v) else ())
    return tuple(got[lvl] for lvl in levels)


def lift(x, levels, rank=None, expand=None):
    """The physical tensor of ``x`` with one leading dim per level of ``levels`` (size 1
    where ``x`` is not batched over it, or ``expand``'s size), its per-sample dims padded
    with leading size-1 dims to ``rank``."""
    own = _levels(x)
    p = x._phys if own else x
    sample = tuple(p.shape[len(own):])
    pad = (1,) * (rank - len(sample)) if rank is not None and rank > len(sample) else ()
    if own == levels and not pad and expand is None:
        return p
    lead, i = [], 0
    for lvl in levels:
        if i < len(own) and own[i] == lvl:
            lead.append(p.shape[i])
            i += 1
        else:
            lead.append(1)
    if i != len(own):
        raise RuntimeError('vmap: internal error, a tensor is batched over a level the '
                           'operation does not see')
    shape = tuple(lead) + pad + sample
    if tuple(p.shape) != shape:
        p = p.reshape(shape)
    if expand is not None and tuple(lead) != tuple(expand):
        p = p.expand(tuple(expand) + pad + sample)
    return p


def out(result, levels):
    if isinstance(result, Tensor):
        return batched(result, levels)
    if isinstance(result, (tuple, list)):
        parts = [out(r, levels) for r in result]
        return type(result)(*parts) if hasattr(result, '_fields') else type(result)(parts)
    return result


def _rank(x):
    return x.dim() if isinstance(x, Tensor) else 0


def _norm_dim(d, n):
    if n == 0:
        return 0
    return d % n


# -- rules by family ------------------------------------------------------------------------

def elementwise(cls, inputs, params):
    levels = union(inputs)
    rank = max(_rank(x) for x in inputs)
    phys = [lift(x, levels, rank) if x.__class__ is BatchedTensor else x for x in inputs]
    if cls.promotes and rank:
        phys = _promote_zero_dim(inputs, phys)
    return out(cls.apply(*phys, **params), levels)


def _promote_zero_dim(inputs, phys):
    """A zero-dim sample promotes like a zero-dim tensor (a weaker claim on the result
    dtype than a tensor with dims), though its physical tensor has the batch dim: cast it
    to the dtype the per-sample op gives first."""
    zero = [k for k, x in enumerate(inputs) if x.__class__ is BatchedTensor and x.dim() == 0]
    if not zero:
        return phys
    want = _dtype.result_type(*inputs)
    return [p.to(want) if k in zero and p.dtype != want else p for k, p in enumerate(phys)]


def leading(cls, inputs, params):
    """Ops that treat any leading dims as a batch already (linear algebra, last-dims ops)."""
    levels = union(inputs)
    phys = [lift(x, levels) if x.__class__ is BatchedTensor else x for x in inputs]
    return out(cls.apply(*phys, **params), levels)


def dims(*names, extra_rank=0, none_is_all=True, expand=False):
    """Ops whose parameters ``names`` hold dims of input 0 (an int, a tuple, or None for
    all of them when ``none_is_all``)."""
    def rule(cls, inputs, params):
        levels = union(inputs)
        k = len(levels)
        n = _rank(inputs[0]) + extra_rank
        if n == 0:
            return _zero_dim(cls, inputs, params, names, levels)
        size = sizes_of(inputs, levels) if expand else None
        rank = max(_rank(x) for x in inputs)
        phys = [lift(x, levels, rank, expand=size) if isinstance(x, Tensor) else x
                for x in inputs]
        p = dict(params)
        for name in names:
            if name not in p:
                continue
            d = p[name]
            if d is None:
                if not none_is_all:
                    return loop(cls, inputs, params)
                if none_is_all == 'flatten':   # an op taking one dim: samples flattened
                    phys[0] = phys[0].reshape(tuple(phys[0].shape[:k]) + (-1,))
                    p[name] = k
                    continue
                p[name] = tuple(range(k, k + n))
            elif isinstance(d, (tuple, list)):
                p[name] = type(d)(k + _norm_dim(int(e), n) for e in d)
            else:
                p[name] = k + _norm_dim(int(d), n)
        return out(cls.apply(*phys, **p), levels)
    rule.__name__ = f'dims{names}'
    return rule


def _zero_dim(cls, inputs, params, names, levels):
    """A zero-dim sample, whose dim 0 (or -1, or all of none) PyTorch lets an op name: it
    is given a trailing size-1 dim for the op to work along, dropped again after."""
    k = len(levels)
    if len(inputs) != 1:
        return loop(cls, inputs, params)
    p = dict(params)
    for name in names:
        if name in p:
            d = p[name]
            p[name] = k if isinstance(d, int) else (k,) * max(len(d), 1) if isinstance(
                d, (tuple, list)) else (k,)
    r = cls.apply(lift(inputs[0], levels).unsqueeze(-1), **p)

    def back(t):
        if isinstance(t, Tensor) and t.dim() == k + 1 and t.shape[k] == 1:
            t = t.squeeze(k)
        return batched(t, levels) if isinstance(t, Tensor) else t
    if isinstance(r, (tuple, list)):
        parts = [back(t) for t in r]
        return type(r)(*parts) if hasattr(r, '_fields') else type(r)(parts)
    return back(r)


def merge(cls, inputs, params):
    """The vmap batch joins the per-sample first dim (an independent batch for the op)."""
    levels = union(inputs)
    size = sizes_of(inputs, levels)
    k = len(levels)
    phys = []
    for x in inputs:
        if isinstance(x, Tensor) and x.dim() > 0 and (x.__class__ is BatchedTensor
                                                      or x is inputs[0]):
            p = lift(x, levels, expand=size)
            phys.append(p.reshape((-1,) + tuple(p.shape[k + 1:])))
        else:
            phys.append(x)
    result = cls.apply(*phys, **params)
    return _split_first(result, size, inputs[0].shape[0], levels)


def _split_first(result, size, first, levels):
    if isinstance(result, (tuple, list)):
        return type(result)(_split_first(r, size, first, levels) for r in result)
    if not isinstance(result, Tensor) or result.dim() == 0:
        return result
    return batched(result.reshape(tuple(size) + (first,) + tuple(result.shape[1:])), levels)


_warned = set()


def loop(cls, inputs, params):
    """The op once per sample, results stacked: correct for any op, but a Python loop."""
    name = getattr(cls, '__qualname__', cls.__name__)
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f'There is a performance drop because we have not yet implemented the '
                      f'batching rule for {name}. (dynagrad runs it once per sample.)',
                      stacklevel=4)
    return loop_call(lambda *xs: cls.apply(*xs, **params), inputs)


def loop_call(fn, inputs, kwargs=None):
    values = list(inputs) + list((kwargs or {}).values())
    levels = union(values)
    size = sizes_of(values, levels)
    k = len(levels)
    count = math.prod(size)

    def sample(x, i):
        if x.__class__ is BatchedTensor:
            p = lift(x, levels, expand=size)
            return p.reshape((count,) + tuple(p.shape[k:]))[i]
        if x.__class__ in (tuple, list) and union(x):
            return type(x)(sample(e, i) for e in x)
        return x
    results = []
    for i in range(count):
        args = [sample(x, i) for x in inputs]
        kw = {name: sample(v, i) for name, v in (kwargs or {}).items()}
        results.append(fn(*args, **kw))
    return _stack_results(results, size, levels)


def _stack_results(results, size, levels):
    first = results[0]
    if isinstance(first, Tensor):
        stacked = _shape.stack(results)
        return batched(stacked.reshape(tuple(size) + tuple(first.shape)), levels)
    if isinstance(first, (tuple, list)):
        parts = [_stack_results([r[j] for r in results], size, levels)
                 for j in range(len(first))]
        return type(first)(parts) if not hasattr(first, '_fields') else type(first)(*parts)
    return first


def unsupported(reason):
    def rule(cls, inputs, params):
        raise RuntimeError(f'vmap: {cls.__qualname__} is not supported under vmap: {reason}')
    return rule


# -- shapes and keys ------------------------------------------------------------------------

def _view(cls, inputs, params):
    x, = inputs
    levels = x._levels
    p = x._phys
    shape = tuple(p.shape[:len(levels)]) + tuple(params['shape'])
    try:
        return batched(cls.apply(p, shape=shape), levels)
    except RuntimeError:
        # The batch dims (moved in by in_dims) keep the per-sample view from being one
        # over the whole batch: PyTorch's vmap copies here too.
        return batched(p.reshape(shape), levels)


def _expand(cls, inputs, params):
    x, = inputs
    levels = x._levels
    target = tuple(params['shape'])
    p = lift(x, levels, len(target))
    return batched(cls.apply(p, shape=tuple(p.shape[:len(levels)]) + target), levels)


def _permute(cls, inputs, params):
    x, = inputs
    k, n = len(x._levels), x.dim()
    order = tuple(range(k)) + tuple(k + _norm_dim(d, n) for d in params['dims'])
    return batched(cls.apply(x._phys, dims=order), x._levels)


def _squeeze(cls, inputs, params):
    x, = inputs
    if params.get('dim') is not None:
        return dims('dim')(cls, inputs, params)
    k = len(x._levels)
    which = tuple(k + i for i, n in enumerate(x.shape) if n == 1)
    return batched(x._phys.squeeze(which) if which else x._phys.view_as(x._phys), x._levels)


def _keyed(cls, inputs, params):
    """Basic indexing (slices, ints, None, Ellipsis): the batch dims are sliced whole."""
    x = inputs[0]
    levels = union(inputs)
    key = params['key']
    key = key if isinstance(key, tuple) else (key,)
    p = dict(params, key=(slice(None),) * len(levels) + key)
    phys = [lift(t, levels, expand=sizes_of(inputs, levels)) if isinstance(t, Tensor) else t
            for t in inputs]
    if x.__class__ is not BatchedTensor:
        return loop(cls, inputs, params)
    return out(cls.apply(*phys, **p), levels)


def _is_array_key(k):
    return hasattr(k, 'shape') and hasattr(k, 'dtype')


def _advanced(cls, inputs, params):
    key = params['key']
    if key.__class__.__name__ == 'TwoStep' and inputs[0].__class__ is BatchedTensor and \
            not union(inputs[1:]):
        k = len(inputs[0]._levels)
        two = object.__new__(type(key))
        two.basic = (slice(None),) * k + key.basic
        two.adv = (slice(None),) * k + key.adv
        adv = [i for i, e in enumerate(two.adv) if _is_array_key(e)]
        if adv and adv == list(range(adv[0], adv[-1] + 1)) and not any(
                e is Ellipsis or e is None for e in two.adv):
            return batched(cls.apply(inputs[0]._phys, key=two), inputs[0]._levels)
        return loop(cls, inputs, params)
    key = key if isinstance(key, tuple) else (key,)
    adv = [i for i, k in enumerate(key) if _is_array_key(k) or isinstance(k, (list,))]
    if (not adv or adv != list(range(adv[0], adv[-1] + 1)) or any(k is Ellipsis for k in key)
            or any(k is None for k in key) or inputs[0].__class__ is not BatchedTensor
            or any(t.__class__ is BatchedTensor for t in inputs[1:])):
        return loop(cls, inputs, params)
    return _keyed(cls, inputs, params)


def _multi_view(cls, inputs, params):
    """split, chunk, unbind: every piece a basic index, the batch dims taken whole."""
    x, = inputs
    k = len(x._levels)
    keys = tuple((slice(None),) * k + (key if isinstance(key, tuple) else (key,))
                 for key in params['keys'])
    return out(cls.apply(x._phys, keys=keys, dim=k + params['dim']), x._levels)


def _scalar_tensor_param(rule):
    """An op taking a zero-dim tensor value (fill, masked_fill), whose gradient the op sums
    to a scalar: with a batched value, the same as ops that broadcast it (a ``where``, or
    the value expanded), so each sample's value gets its own gradient."""
    def checked(cls, inputs, params):
        value = inputs[-1]
        if not (value.__class__ is BatchedTensor and value.dim() == 0):
            return rule(cls, inputs, params)
        x = inputs[0]
        v = value.to(x.dtype)
        if len(inputs) == 3:        # masked_fill(x, mask, value)
            return _clamping.where(inputs[1], v, x)
        everywhere = _creation.ones_like(x, dtype=_dtype.bool)        # fill(x, value)
        return _clamping.where(everywhere, v, x)
    checked.scalar_value = True
    return checked


def _index_put(cls, inputs, params):
    """x[key] = values with a key of slices and adjacent index arrays: the batch dims are
    taken whole, the values lifted to the written region's rank."""
    x, values = inputs
    key = params['key']
    if not isinstance(key, tuple):
        key = (key,)
    adv = [i for i, e in enumerate(key) if _is_array_key(e)]
    if (key.__class__.__name__ == 'TwoStep' or (adv and adv != list(range(adv[0], adv[-1] + 1)))
            or any(e is Ellipsis or e is None for e in key)):
        return loop(cls, inputs, params)
    levels = union(inputs)
    size = sizes_of(inputs, levels)
    k = len(levels)
    region = params.get('region_shape')
    px = lift(x, levels, expand=size)
    p = dict(params, key=(slice(None),) * k + key)
    if region is not None:
        p['region_shape'] = tuple(size) + tuple(region)
    pv = values
    if values.__class__ is BatchedTensor:
        pv = lift(values, levels, len(region) if region is not None else None)
    return out(cls.apply(px, pv, **p), levels)


def _solve(cls, inputs, params):
    """solve(A, B): the per-sample batch dims of A and B (what precedes their matrix or
    vector dims) padded to one rank, so they broadcast as the sample's would."""
    A, B = inputs
    levels = union(inputs)
    vector = params.get('vector', False)
    batch = max(A.dim() - 2, B.dim() - (1 if vector else 2))
    pa = lift(A, levels, batch + 2) if A.__class__ is BatchedTensor else A
    pb = lift(B, levels, batch + (1 if vector else 2)) if B.__class__ is BatchedTensor else B
    if A.__class__ is not BatchedTensor:
        pa = A.reshape((1,) * len(levels) + tuple(A.shape))
    if B.__class__ is not BatchedTensor:
        pb = B.reshape((1,) * len(levels) + tuple(B.shape))
    return out(cls.apply(pa, pb, **params), levels)


def _cat(cls, inputs, params):
    levels = union(inputs)
    size = sizes_of(inputs, levels)
    n = max(x.dim() for x in inputs) + (1 if cls is _shape.Stack else 0)
    d = len(levels) + _norm_dim(params['dim'], n)
    phys = [lift(x, levels, expand=size) for x in inputs
            if not (cls is _shape.Cat and x.dim() == 1 and x.shape[0] == 0)]
    return batched(cls.apply(*phys, **dict(params, dim=d)), levels)


def _repeat(cls, inputs, params):
    x, = inputs
    reps = tuple(params['repeats'])
    p = lift(x, x._levels, len(reps))
    return batched(cls.apply(p, repeats=(1,) * len(x._levels) + reps), x._levels)


def _roll(cls, inputs, params):
    if params.get('dims') not in (None, ()):
        return dims('dims')(cls, inputs, params)
    x, = inputs        # no dims: the flattened sample rolls
    k = len(x._levels)
    p = x._phys.reshape(tuple(x._phys.shape[:k]) + (-1,))
    r = cls.apply(p, **dict(params, dims=(k,)))
    return batched(r.reshape(x._phys.shape), x._levels)


def _renorm(cls, inputs, params):
    """Each slice along ``axis`` scaled to norm ``maxnorm`` at most: the norm over the
    sample's other dims, as ops (PyTorch's formula, maxnorm / (norm + 1e-7))."""
    x, = inputs
    n = x.dim()
    axis = params['axis'] % n
    others = tuple(i for i in range(n) if i != axis)
    if not others:
        return loop(cls, inputs, params)
    norm = _reduction.norm(x, params['p'], others, keepdim=True)
    maxnorm = params['maxnorm']
    scale = _clamping.where(norm > maxnorm, maxnorm / (norm + 1e-7),
                            _creation.ones_like(norm))
    return x * scale


def _trace(cls, inputs, params):
    x, = inputs
    k = len(x._levels)
    return batched(x._phys.diagonal(0, k, k + 1).sum(-1), x._levels)


# -- products -------------------------------------------------------------------------------

def _matmul(cls, inputs, params):
    a, b = inputs
    levels = union(inputs)
    na, nb = a.dim(), b.dim()
    pa = lift(a, levels) if a.__class__ is BatchedTensor else a
    pb = lift(b, levels) if b.__class__ is BatchedTensor else b
    if na == 1:
        pa = pa.unsqueeze(-2)
    if nb == 1:
        pb = pb.unsqueeze(-1)
    rank = max(na, nb, 2)
    if a.__class__ is BatchedTensor:
        pa = lift(batched(pa, levels), levels, rank)
    if b.__class__ is BatchedTensor:
        pb = lift(batched(pb, levels), levels, rank)
    r = cls.apply(pa, pb, **params)
    if na == 1:
        r = r.squeeze(-2)
    if nb == 1:
        r = r.squeeze(-1)
    return batched(r, levels)


def _linear(cls, inputs, params):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else params.get('bias')
    if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
        return leading(cls, inputs, params)
    # w @ x^T rather than x @ w^T: the weight's gradient (g^T x) then comes out in its own
    # layout, with no strided copy of a whole batch of weight gradients
    if w.dim() == 1:
        y = _lp.matmul(x, w)
    else:
        y = _lp.matmul(w, x) if x.dim() == 1 else _lp.matmul(w, x.mT).mT
    return y if b is None else y + b


def _addmatmul(cls, inputs, params):
    inp, m1, m2 = inputs
    beta, alpha = params.get('beta', 1), params.get('alpha', 1)
    kind = params.get('kind', 'addmm')
    if kind == 'addmv':
        prod = _lp.matmul(m1, m2)
    else:
        prod = _lp.matmul(m1, m2)
        if kind == 'addbmm':
            prod = prod.sum(0)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:     # the input ignored, NaN and all; only its shape broadcasts
        return prod + _creation.zeros_like(inp)
    return prod + (inp if beta == 1 else inp * beta)


def _addr(cls, inputs, params):
    inp, v1, v2 = inputs
    beta, alpha = params.get('beta', 1), params.get('alpha', 1)
    prod = v1.unsqueeze(-1) * v2.unsqueeze(-2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod + _creation.zeros_like(inp)
    return prod + (inp if beta == 1 else inp * beta)


_LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'


def _einsum(cls, inputs, params):
    levels = union(inputs)
    size = sizes_of(inputs, levels)
    used = set(''.join(params['inputs']) + params['output'])
    fresh = ''.join(c for c in _LETTERS + 'abcdefghijklmnopqrstuvwxyz' if c not in used)
    lead = fresh[:len(levels)]
    subs, phys = [], []
    for x, s in zip(inputs, params['inputs']):
        if x.__class__ is BatchedTensor:
            phys.append(lift(x, levels, expand=size))
            subs.append(lead + s)
        else:
            phys.append(x)
            subs.append(s)
    return batched(cls.apply(*phys, inputs=tuple(subs), output=lead + params['output']),
                   levels)


# -- neural-network ops ---------------------------------------------------------------------

def _convolution(cls, inputs, params):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    levels = union(inputs)
    size = sizes_of(inputs, levels)
    k = len(levels)
    spatial = w.dim() - 2
    unbatched_input = x.dim() == spatial + 1        # (C, *spatial): no N dim
    if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
        p = lift(x, levels)
        if unbatched_input:
            r = cls.apply(p.reshape((-1,) + tuple(p.shape[k:])), *inputs[1:], **params)
            return batched(r.reshape(tuple(size) + tuple(r.shape[1:])), levels)
        r = cls.apply(p.reshape((-1,) + tuple(p.shape[k + 1:])), *inputs[1:], **params)
        return batched(r.reshape(tuple(size) + (x.shape[0],) + tuple(r.shape[1:])), levels)
    # A batched weight: one grouped convolution, sample i's channels as group block i.
    count = math.prod(size)
    px = lift(x, levels, expand=size).reshape((count,) + tuple(x.shape))
    if unbatched_input:
        px = px.unsqueeze(1)
    n = px.shape[1]
    px = px.transpose(0, 1).reshape((n, -1) + tuple(px.shape[3:]))
    pw = lift(w, levels, expand=size)
    pw = pw.reshape((-1,) + tuple(pw.shape[k + 1:]))
    args = [px, pw]
    if b is not None:
        args.append(lift(b, levels, expand=size).reshape(-1))
    groups = params['groups'] * count
    r = cls.apply(*args, **dict(params, groups=groups))
    r = r.reshape((n, count, -1) + tuple(r.shape[2:])).transpose(0, 1)
    if unbatched_input:
        r = r.squeeze(1)
        return batched(r.reshape(tuple(size) + tuple(r.shape[1:])), levels)
    return batched(r.reshape(tuple(size) + tuple(r.shape[1:])), levels)


def _pointwise_loss(cls, inputs, params):
    reduction = params.get('reduction', 'mean')
    per_element = elementwise(cls, inputs, dict(params, reduction='none'))
    if reduction == 'none':
        return per_element
    return per_element.sum() if reduction == 'sum' else per_element.mean()


def _random_op(cls, inputs, params):
    lvl = _state.stack[-1] if _state.stack else None
    if lvl is not None and lvl.randomness == 'same' and issubclass(cls, _random._Fill):
        return NotImplemented
    return elementwise(cls, inputs, params)


# -- the table ------------------------------------------------------------------------------


RULES = {
    # arithmetic and clamping: broadcasting
    **{c: elementwise for c in (
        _arith.Add, _arith.Addcdiv, _arith.Addcmul, _arith.Atan2, _arith.Copysign, _arith.Div,
        _arith.DivMode, _arith.Fmod, _arith.Frexp, _arith.Gcd, _arith.Hypot, _arith.Ldexp,
        _arith.Logaddexp, _arith.Logaddexp2, _arith.Mul, _arith.Nextafter, _arith.Pow,
        _arith.PowTensor, _arith.Rdiv, _arith.Remainder, _arith.Rpow, _arith.Rsub, _arith.Sub,
        _arith.Xlogy, _clamping.Cast, _clamping.Clamp, _clamping.ClampMax,
        _clamping.ClampMaxTensor, _clamping.ClampMin, _clamping.ClampMinTensor,
        _clamping.ClampTensor, _clamping.Clone, _clamping.Copy, _clamping.Fill,
        _clamping.Fmax, _clamping.Lerp, _clamping.LerpTensor,
        _clamping.Maximum, _clamping.NanToNum, _clamping.Where, _conversion.ToDevice,
        _special.Igamma, _special.Mvlgamma, _special.Polygamma, _strided.CopyOfView,
        _strided._SetNotDifferentiable, _loss._DivScalar, _drop.DropoutMul,
        _dist._LastDimNorm, _dist.Cdist, _attn.ScaledDotProductAttention)},
    **{c: _scalar_tensor_param(elementwise) for c in (
        _clamping.FillTensor, _indexing.MaskedFill, _indexing.MaskedFillTensor)},
    **{getattr(_ops.unary, name): elementwise for name in ('Logit', 'RoundDecimals')},
    # activations
    **{c: elementwise for c in (
        _act.Elu, _act.Gelu, _act.HardshrinkOp, _act.HardsigmoidOp, _act.HardswishOp,
        _act.HardtanhOp, _act.LeakyRelu, _act.LogSigmoidOp, _act.MishOp, _act.Silu,
        _act.SoftplusOp, _act.SoftshrinkOp, _act.ThresholdOp, _act.Rrelu)},
    _act.Prelu: lambda cls, inputs, params: (
        loop(cls, inputs, params) if inputs[1].__class__ is BatchedTensor
        else leading(cls, inputs, params)),
    _act.Glu: dims('dim'), _act.LogSoftmaxOp: dims('dim'), _act.SoftmaxOp: dims('dim'),
    # reductions and scans
    **{c: dims('dim') for c in (_reduction.Sum, _reduction.Mean, _reduction.Nansum,
                                 _reduction.VectorNorm)},
    _reduction.Prod: dims('dim', none_is_all='flatten'),
    **{c: dims('dims') for c in (_reduction.Amax, _reduction.Aminmax, _reduction.Logsumexp,
                                  _reduction.VarStd)},
    **{c: dims('axis') for c in (_reduction.Cummax, _reduction.Cumprod, _reduction.Cumsum,
                                  _ordering.Kthvalue, _reduction.Logcumsumexp,
                                  _reduction.MaxDim, _ordering.MedianDim, _ordering.Mode,
                                  _ordering.Sort, _reduction._Flip)},
    **{c: dims('axis', expand=True) for c in (_reduction._PutAlong, _reduction._TakeAlong)},
    _ln._Extreme: dims('dim'),
    # shapes
    _shape.View: _view, _shape.Expand: _expand, _shape.Permute: _permute,
    _shape.Transpose: dims('dim0', 'dim1'), _shape.Squeeze: _squeeze,
    _shape.Unsqueeze: dims('dim', extra_rank=1),
    _shape.Diagonal: dims('dim1', 'dim2'), _shape.DiagEmbed: dims('dim1', 'dim2', extra_rank=1),
    _shape.Flip: dims('dims'), _shape.Roll: _roll, _reduction.Renorm: _renorm, _shape.Rot90: dims('dims'),
    _shape.Repeat: _repeat, _shape.RepeatInterleave: dims('dim', none_is_all=False),
    _shape._MultiView: _multi_view, _shape.Cat: _cat, _shape.Stack: _cat,
    _shape.Tril: leading, _shape.Triu: leading, _shape.Trace: _trace,
    _shape.Unfold: dims('dimension'), _shape.Narrow: _keyed,
    _indexing.BasicIndex: _keyed, _indexing.AdvancedIndex: _advanced,
    _indexing.IndexPut: _index_put,
    _strided.AsStrided: unsupported('as_strided addresses storage, which a batch of samples '
                                    'does not share; use view operations instead'),
    _indexing.MaskedSelect: unsupported('its output size depends on the data (vmap: We do not '
                                        'support batching operators that can output dynamic '
                                        'shape)'),
    # linear algebra
    _lp.Matmul: _matmul, _lin.LinearOp: _linear, _lp.AddMatmul: _addmatmul, _lp.Addr: _addr,
    _lp.Einsum: _einsum, _lp.Cross: dims('dim'),
    **{c: leading for c in (_ld.Cholesky, _ld.Det, _ld.Eigh, _ld.Eigvalsh, _ld.Inv, _ld.Pinv,
                            _ld.Qr, _ld.Slogdet, _ld.Svd, _ld.Svdvals, _ld._PowerZero)},
    _ld.Solve: _solve, _eig.Eig: leading,
    **{c: dims('dims') for c in (_spectral.FftC2C, _spectral.FftR2C, _spectral.FftC2R)},
    # neural-network ops
    _conv.Convolution: _convolution,
    **{c: merge for c in (_pool.MaxPoolOp, _pool.AvgPoolOp, _pool.AdaptiveMaxPoolOp,
                          _pool.MaxUnpool, _vision.ChannelShuffle, _vision.GridSampler)},
    **{c: leading for c in (_vision.PixelShuffle, _vision.PixelUnshuffle,
                            _vision.ConstantPadNd, _vision.AxisGather, _vision.AxisScatter,
                            _pool.AxisMatmul)},
    _loss._PointwiseLoss: _pointwise_loss,
    _norm.RmsNorm: dims('axes'),
    # random draws: each sample its own (the generator refuses them in 'error' mode)
    **{c: _random_op for c in (_random.Bernoulli, _random.Normal, _random.Poisson,
                               _random.Binomial, _random._Fill, _random.BernoulliScalarP)},
}


BY_NAME = {'elementwise': elementwise, 'leading': leading, 'merge': merge}


class Rules:
    """The dispatcher ``autograd.batched`` calls for an op with batched inputs."""

    def __init__(self):
        self.cache = {}

    def rule_of(self, cls):
        rule = self.cache.get(cls)
        if rule is None:
            rule = loop
            for base in cls.__mro__:
                if base in RULES:
                    rule = RULES[base]
                    break
                if base.__dict__.get('vmap_rule'):
                    rule = BY_NAME[base.__dict__['vmap_rule']]
                    break
            self.cache[cls] = rule
        return rule

    def apply(self, cls, inputs, params):
        for v in params.values():
            if v.__class__ is BatchedTensor:
                return loop_call(lambda *xs, **kw: cls.apply(*xs, **kw), inputs, params)
        result = self.rule_of(cls)(cls, inputs, params)
        if result is NotImplemented:        # 'same' randomness: one draw for every sample
            return _same_draw(cls, inputs, params)
        return result

    def apply_inplace(self, cls, target, others, params):
        levels = union((target,) + tuple(others))
        if _levels(target) != levels:
            raise RuntimeError(
                f'vmap: {cls.__qualname__.lower()}_(self, *extra_args) is not possible because '
                'there exists a Tensor `other` in extra_args that has more elements than '
                '`self`. This happened due to `other` being vmapped over but `self` not being '
                'vmapped over in a vmap. Please try to use out-of-place operators instead of '
                f'{cls.__qualname__.lower()}_. If said operator is being called inside the '
                'PyTorch framework, please file a bug report instead.')
        rule = self.rule_of(cls)
        if (rule is _random_op and _state.stack and _state.stack[-1].randomness == 'same'):
            fresh = _same_draw(cls, (_creation.empty_like(target),) + tuple(others), params)
            return _shape_copy_into(target, fresh)
        if rule in (elementwise, _random_op, leading):
            rank = target.dim()
            phys = [lift(x, levels, rank) if x.__class__ is BatchedTensor else x
                    for x in others]
            cls.apply_(target._phys, *phys, **params)
            return target
        if getattr(rule, 'scalar_value', False):
            target.copy_(rule(cls, (target,) + tuple(others), params))
            return target
        if rule.__name__.startswith('dims') or rule is _index_put:
            rule(_InplaceOf(cls), (target,) + tuple(others), params)
            return target
        raise RuntimeError(f'vmap: the in-place {cls.__qualname__} has no batching rule; use '
                           'its out-of-place form inside vmap')

    def function(self, strategy, fn, args, kwargs):
        return FUNCTION_RULES[strategy](fn, args, kwargs)


class _InplaceOf:
    """``cls`` seen by a rule as an op whose ``apply`` writes into its first input."""

    def __init__(self, cls):
        self.cls = cls
        self.__qualname__ = cls.__qualname__

    def apply(self, target, *others, **params):
        return self.cls.apply_(target, *others, **params)


def _same_draw(cls, inputs, params):
    """'same' randomness: one draw of a sample's shape, shared by every sample."""
    first = inputs[0]
    levels = union(inputs)
    if issubclass(cls, _random._Fill) or first.__class__ is not BatchedTensor:
        plain = [_creation.empty(tuple(x.shape), dtype=x.dtype) if x.__class__ is BatchedTensor
                 else x for x in inputs]
        drawn = cls.apply(*plain, **params)
        size = sizes_of(inputs, levels)
        return batched(lift(drawn, levels, expand=size).contiguous(), levels)
    if issubclass(cls, _random.Bernoulli) and len(inputs) == 1:
        # one uniform draw of a sample's shape, compared with each sample's probabilities
        u = _random.rand(tuple(first.shape), dtype=first.dtype,
                         generator=params.get('generator'))
        return (u < first).to(first.dtype)
    raise RuntimeError(f"vmap: randomness='same' with batched parameters of "
                       f"{cls.__qualname__} is not supported; use randomness='different'")


def _shape_copy_into(target, fresh):
    target._phys.copy_(lift(fresh, target._levels, expand=tuple(target._phys.shape[
        :len(target._levels)])))
    return target


# -- public functions that read arrays ------------------------------------------------------

def _physical_call(fn, args, kwargs):
    """The function on the physical tensors: right for functions indifferent to leading
    dims (layer_norm over trailing dims, embedding of batched indices) whose parameters
    (every argument after the first) are not batched; else once per sample."""
    values = list(args) + list(kwargs.values())
    levels = union(values)
    if any(v.__class__ is BatchedTensor for v in values[1:]):
        return loop_call(fn, args, kwargs)

    def phys(x):
        return lift(x, levels) if x.__class__ is BatchedTensor else x
    return out(fn(*[phys(a) for a in args], **{k: phys(v) for k, v in kwargs.items()}),
               levels)


def _merged_call(fn, args, kwargs):
    """The vmap batch joined to the first argument's first dim (group/instance norm)."""
    x = args[0]
    levels = union(list(args) + list(kwargs.values()))
    if any(v.__class__ is BatchedTensor for v in list(args[1:]) + list(kwargs.values())):
        return loop_call(fn, args, kwargs)
    size = sizes_of([x], levels)
    p = lift(x, levels)
    first = x.shape[0]
    r = fn(p.reshape((-1,) + tuple(p.shape[len(levels) + 1:])), *args[1:], **kwargs)
    return batched(r.reshape(tuple(size) + (first,) + tuple(r.shape[1:])), levels)


def _loop_function(fn, args, kwargs):
    return loop_call(fn, args, kwargs)


def _class_loss(fn, args, kwargs):
    """cross_entropy / nll_loss: per element over the merged batch, reduced per sample."""
    names = ('input', 'target', 'weight', 'size_average', 'ignore_index', 'reduce',
             'reduction', 'label_smoothing')
    bound = dict(zip(names, args))
    bound.update(kwargs)
    x, target = bound['input'], bound['target']
    weight = bound.get('weight')
    if weight.__class__ is BatchedTensor:
        return loop_call(fn, args, kwargs)
    reduction = bound.get('reduction', 'mean')
    if bound.get('size_average') is not None or bound.get('reduce') is not None:
        reduction = _loss._reduction(bound.get('size_average'), bound.get('reduce'),
                                     reduction)
    ignore_index = bound.get('ignore_index', -100)
    levels = union([x, target])
    size = sizes_of([x, target], levels)
    k = len(levels)
    px = lift(x, levels, expand=size)
    pt = lift(target, levels, expand=size)
    if x.dim() == 1:
        px2, pt2 = px.reshape(-1, x.shape[0]), pt.reshape(-1)
    else:
        px2 = px.reshape((-1,) + tuple(x.shape[1:]))
        pt2 = pt.reshape((-1,) + tuple(target.shape[1:]))
    rest = {n: v for n, v in bound.items()
            if n not in ('input', 'target', 'reduction', 'size_average', 'reduce')}
    loss = fn(px2, pt2, reduction='none', **rest)
    per_sample = tuple(target.shape) if not target.dtype.is_floating_point else tuple(
        x.shape[:1] + x.shape[2:]) if x.dim() > 1 else ()
    loss = loss.reshape(tuple(size) + per_sample)
    if reduction == 'none':
        return batched(loss, levels)
    axes = tuple(range(k, k + len(per_sample)))
    total = loss.sum(axes) if axes else loss
    if reduction == 'sum':
        return batched(total, levels)
    if target.dtype.is_floating_point:
        return batched(total / max(math.prod(per_sample), 1), levels)
    valid = pt != ignore_index
    if weight is None:
        den = valid.sum(axes, dtype=px.dtype) if axes else valid.to(px.dtype)
    else:
        w = weight[pt.clamp(min=0)] * valid
        den = w.sum(axes) if axes else w
    return batched(total / den, levels)


def _batch_norm(fn, args, kwargs):
    names = ('input', 'running_mean', 'running_var', 'weight', 'bias', 'training', 'momentum',
             'eps')
    bound = dict(zip(names, args))
    bound.update(kwargs)
    x = bound['input']
    training = bound.get('training', False)
    rm, rv = bound.get('running_mean'), bound.get('running_var')
    others = [bound.get(n) for n in ('running_mean', 'running_var', 'weight', 'bias')]
    if training and rm is not None:
        raise RuntimeError(_RUNNING_STATS_ERROR)
    if any(o.__class__ is BatchedTensor for o in others):
        return loop_call(fn, args, kwargs)
    levels = x._levels
    size = tuple(x._phys.shape[:len(levels)])
    count = math.prod(size)
    if not training or rm is None:
        if training:    # statistics of each sample's own batch: its channels side by side
            p = x._phys.reshape((count,) + tuple(x.shape))
            c = x.shape[1]
            q = p.transpose(0, 1).reshape((x.shape[0], count * c) + tuple(x.shape[2:]))
            w, b = bound.get('weight'), bound.get('bias')
            r = fn(q, None, None, None if w is None else w.repeat(count),
                   None if b is None else b.repeat(count), True, bound.get('momentum', 0.1),
                   bound.get('eps', 1e-5))
            r = r.reshape((x.shape[0], count) + tuple(x.shape[1:])).transpose(0, 1)
            return batched(r.reshape(size + tuple(x.shape)), levels)
        return _merged_call(fn, args, kwargs)
    raise RuntimeError(_RUNNING_STATS_ERROR)


_RUNNING_STATS_ERROR = (
    'vmap: batch_norm in training mode with running statistics would write every '
    "sample's statistics into one running_mean: call the module in eval() mode, or make "
    'it track_running_stats=False (as PyTorch asks, see functorch.experimental.'
    'replace_all_batch_norm_modules_)')


def _instance_norm(fn, args, kwargs):
    names = ('input', 'running_mean', 'running_var', 'weight', 'bias', 'use_input_stats')
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if bound.get('running_mean') is not None and bound.get('use_input_stats', True):
        raise RuntimeError(_RUNNING_STATS_ERROR)
    return _merged_call(fn, args, kwargs)


def _dropout(fn, args, kwargs):
    lvl = _state.stack[-1] if _state.stack else None
    if lvl is not None and lvl.randomness == 'different':
        return _physical_call(fn, args, kwargs)
    return fn(*args, **kwargs)


def _index_key(fn, args, kwargs):
    """x[key] and x[key] = value: a key holding batched index tensors, or a batched value
    written into a batched x through advanced indexing, go sample by sample; the rest is
    the ops' own batching rules."""
    if union(args[1:]):
        if fn.__name__ == 'getitem':
            got = _batched_index(args[0], args[1])
            if got is not None:
                return got
        return loop_call(fn, args, kwargs)
    return fn(*args, **kwargs)


def _batched_index(x, key):
    """``x[idx]`` with one batched integer index tensor (the first dim indexed, the
    commonest gather): each sample's rows picked by one advanced index over the batch."""
    if isinstance(key, tuple):
        if len(key) != 1:
            return None
        key = key[0]
    if key.__class__ is not BatchedTensor or key.dtype.is_floating_point or \
            str(key.dtype).endswith('bool') or x.dim() == 0:
        return None
    levels = union([x, key])
    size = sizes_of([x, key], levels)
    count = math.prod(size)
    px = lift(x, levels, expand=size).reshape((count,) + tuple(x.shape))
    pk = lift(key, levels, expand=size).reshape((count,) + tuple(key.shape))
    pk = _clamping.where(pk < 0, pk + x.shape[0], pk)
    rows = _creation.arange(count).reshape((count,) + (1,) * key.dim())
    got = px[rows, pk]
    return batched(got.reshape(tuple(size) + tuple(got.shape[1:])), levels)


FUNCTION_RULES = {
    'index_key': _index_key,
    'physical': _physical_call,
    'merge': _merged_call,
    'loop': _loop_function,
    'class_loss': _class_loss,
    'batch_norm': _batch_norm,
    'instance_norm': _instance_norm,
    'dropout': _dropout,
}


# -- functions with dim arguments that read their index or value arrays --------------------

_SIGNATURES = {}


def _bind(fn, args, kwargs):
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


def dim_call(lifted, dims=('dim',), none='flatten', expand=True, rank_of=None,
             front=None):
    """A function whose tensor arguments ``lifted`` take the batch dims and whose ``dims``
    arguments move past them: run once on the physical tensors (their values are read
    there, every sample's at once). ``none``: what a dim of None means ('flatten': the
    sample flattened, 'all': every sample dim, 'loop': once per sample). ``front``: the
    name of an argument whose presence puts a dim in front of the result (quantile's q)."""
    def rule(fn, args, kwargs):
        bound = _bind(fn, args, kwargs)
        a = bound.arguments
        levels = union(list(a.values()))
        others = [v for name, v in a.items() if name not in lifted]
        if union(others) or not levels:
            return loop_call(fn, args, kwargs)
        k = len(levels)
        size = sizes_of(list(a.values()), levels)
        first = a[lifted[0]]
        n = first.dim() if rank_of is None else max(
            a[name].dim() for name in lifted if isinstance(a[name], Tensor))
        if n == 0:      # a zero-dim sample: rare, and its dims are 0 and -1 alike
            return loop_call(fn, args, kwargs)
        flatten = False
        for name in dims:
            d = a.get(name)
            if d is None:
                if none == 'loop' or name not in a:
                    if name in a:
                        return loop_call(fn, args, kwargs)
                    continue
                if none == 'all':
                    a[name] = tuple(range(k, k + n))
                else:
                    flatten = True
                    a[name] = k
            elif n == 0:
                return loop_call(fn, args, kwargs)
            elif isinstance(d, (tuple, list)):
                a[name] = type(d)(k + int(e) % n for e in d)
            else:
                a[name] = k + int(d) % n
        for name in lifted:
            v = a.get(name)
            if isinstance(v, Tensor):
                p = lift(v, levels, n if rank_of else None, expand=size if expand else None)
                if flatten:
                    p = p.reshape(tuple(p.shape[:k]) + (-1,))
                a[name] = p
        r = fn(*bound.args, **bound.kwargs)
        if front is not None and isinstance(a.get(front), Tensor) and a[front].dim() == 1:
            r = r.movedim(0, k)
        if flatten and a.get('keepdim'):
            r = r.reshape(tuple(r.shape[:k]) + (1,) * n)
        return out(r, levels)
    return rule


def _take(fn, args, kwargs):
    x, index = args[0], args[1]
    levels = union([x, index])
    size = sizes_of([x, index], levels)
    k = len(levels)
    flat = lift(x, levels, expand=size)
    flat = flat.reshape(tuple(size) + (-1,))
    idx = lift(index, levels, expand=size)
    idx = _clamping.where(idx < 0, idx + flat.shape[k], idx)   # take counts from the end
    got = flat.gather(k, idx.reshape(tuple(size) + (-1,)))
    return batched(got.reshape(tuple(size) + tuple(index.shape)), levels)


def _pointwise_loss_function(fn, args, kwargs):
    """binary cross-entropy (with logits): per element on the physical tensors, then each
    sample's own reduction."""
    bound = _bind(fn, args, kwargs)
    a = bound.arguments
    reduction = a.get('reduction', 'mean')
    if a.get('size_average') is not None or a.get('reduce') is not None:
        reduction = _loss._reduction(a.get('size_average'), a.get('reduce'), reduction)
        a['size_average'] = a['reduce'] = None
    names = [n for n, v in a.items() if isinstance(v, Tensor)]
    levels = union([a[n] for n in names])
    rank = max(a[n].dim() for n in names)
    for name in names:
        if a[name].__class__ is BatchedTensor:
            a[name] = lift(a[name], levels, rank)
    a['reduction'] = 'none'
    per_element = batched(fn(*bound.args, **bound.kwargs), levels)
    if reduction == 'none':
        return per_element
    return per_element.sum() if reduction == 'sum' else per_element.mean()


def _margin_loss(fn, args, kwargs):
    """multi_margin / multilabel_margin: per row over the merged batch, reduced per sample."""
    bound = _bind(fn, args, kwargs)
    a = bound.arguments
    if a.get('weight').__class__ is BatchedTensor:
        return loop_call(fn, args, kwargs)
    reduction = a.get('reduction', 'mean')
    if a.get('size_average') is not None or a.get('reduce') is not None:
        reduction = _loss._reduction(a.get('size_average'), a.get('reduce'), reduction)
        a['size_average'] = a['reduce'] = None
    x, t = a['input'], a['target']
    levels = union([x, t])
    size = sizes_of([x, t], levels)
    px, pt = lift(x, levels, expand=size), lift(t, levels, expand=size)
    a['input'] = px.reshape((-1,) + tuple(x.shape[1:]) if x.dim() > 1 else (-1, x.shape[0]))
    a['target'] = pt.reshape((-1,) + tuple(t.shape[1:]) if x.dim() > 1 else
                             ((-1,) if t.dim() == 0 else (-1, t.shape[0])))
    a['reduction'] = 'none'
    rows = x.shape[0] if x.dim() > 1 else None
    loss = fn(*bound.args, **bound.kwargs)
    loss = loss.reshape(tuple(size) + ((rows,) if rows is not None else ()))
    loss = batched(loss, levels)
    if reduction == 'none' or rows is None:
        return loss
    return loss.sum() if reduction == 'sum' else loss.mean()


def _affine_after(norm_args):
    """layer_norm / group_norm / instance_norm / batch_norm with a batched weight or bias:
    the normalisation without them (its own rule), then ``* weight + bias`` as ops."""
    def rule(fn, args, kwargs):
        bound = _bind(fn, args, kwargs)
        a = bound.arguments
        w, b = a.get('weight'), a.get('bias')
        if w.__class__ is not BatchedTensor and b.__class__ is not BatchedTensor:
            return norm_args[1](fn, args, kwargs)
        x = a['input']
        a['weight'] = a['bias'] = None
        y = norm_args[1](fn, tuple(bound.args), dict(bound.kwargs))
        if norm_args[0] == 'trailing':
            shape = None
        else:       # per channel (dim 1)
            shape = (x.shape[1],) + (1,) * (x.dim() - 2)
        if w is not None:
            y = y * (w if shape is None else w.reshape(shape))
        if b is not None:
            y = y + (b if shape is None else b.reshape(shape))
        return y
    return rule


def _embedding(fn, args, kwargs):
    bound = _bind(fn, args, kwargs)
    a = bound.arguments
    idx, weight = a['input'], a['weight']
    if weight.__class__ is not BatchedTensor:
        return _physical_call(fn, args, kwargs)
    if a.get('max_norm') is not None or a.get('scale_grad_by_freq'):
        # rows renormalised in place, gradients scaled by counts: sample by sample
        return loop_call(fn, args, kwargs)
    levels = union([idx, weight])
    size = sizes_of([idx, weight], levels)
    count = math.prod(size)
    table = lift(weight, levels, expand=size).reshape((count,) + tuple(weight.shape))
    pidx = lift(idx, levels, expand=size).reshape((count,) + tuple(idx.shape))
    rows = _creation.arange(count).reshape((count,) + (1,) * idx.dim())
    got = table[rows, pidx]
    if a.get('padding_idx') is not None:    # the padding row's value, with no gradient
        pad = (pidx == (a['padding_idx'] % weight.shape[0])).unsqueeze(-1)
        got = _clamping.where(pad, got.detach(), got)
    return batched(got.reshape(tuple(size) + tuple(got.shape[1:])), levels)


def _prelu(fn, args, kwargs):
    x, w = args[0], args[1]
    if w.__class__ is not BatchedTensor:
        return fn(*args, **kwargs)
    if x.dim() == 0:
        w = w.reshape(())
    elif x.dim() >= 2 and w.numel() > 1:     # one weight per channel (dim 1)
        w = w.reshape((w.shape[0],) + (1,) * (x.dim() - 2))
    pos = x.clamp(min=0)
    return pos + w * (x - pos)


def _one_hot(fn, args, kwargs):
    bound = _bind(fn, args, kwargs)
    if bound.arguments.get('num_classes', -1) == -1:
        raise RuntimeError('vmap: one_hot needs num_classes under vmap (finding it reads the '
                           "largest index, data-dependent as torch's vmap refuses); pass "
                           'num_classes=')
    return _physical_call(fn, args, kwargs)


def _max_unpool(fn, args, kwargs):
    name, n, x, indices, out_size = args
    levels = union([x, indices])
    size = sizes_of([x, indices], levels)
    k = len(levels)
    px = lift(x, levels, expand=size)
    pi = lift(indices, levels, expand=size)
    if x.dim() == n + 1:        # no N: the batch is it
        px = px.reshape((-1,) + tuple(px.shape[k:]))
        pi = pi.reshape((-1,) + tuple(pi.shape[k:]))
        r = fn(name, n, px, pi, out_size)
        return batched(r.reshape(tuple(size) + tuple(r.shape[1:])), levels)
    px = px.reshape((-1,) + tuple(px.shape[k + 1:]))
    pi = pi.reshape((-1,) + tuple(pi.shape[k + 1:]))
    r = fn(name, n, px, pi, out_size)
    return batched(r.reshape(tuple(size) + (x.shape[0],) + tuple(r.shape[1:])), levels)


def _sampler(fn, args, kwargs):
    """bernoulli, poisson, binomial, multinomial of batched parameters: 'different' draws
    for every element of the physical tensors (their checks read every sample's values
    there); 'same' shares one draw where the sampler is a transform of one (bernoulli)."""
    lvl = _state.stack[-1]
    if lvl.randomness == 'error':
        _random.check_random()
    if lvl.randomness == 'same':
        if fn.__name__ == 'bernoulli' and len(args) == 1 and not kwargs:
            p = args[0]
            u = _random.rand(tuple(p.shape), dtype=p.dtype)
            return (u < p).to(p.dtype)
        raise RuntimeError(f"vmap: randomness='same' with batched parameters of "
                           f"{fn.__name__} is not supported; use randomness='different'")
    return _physical_call(fn, args, kwargs)


FUNCTION_RULES.update({
    'sampler': _sampler,
    'gather': dim_call(('input', 'index')),
    'scatter': dim_call(('input', 'index', 'src')),
    'index_select': dim_call(('input',), expand=False),
    'index_update': dim_call(('input', 'source')),
    'index_fill': dim_call(('input',), expand=False),
    'take_along_dim': dim_call(('input', 'indices'), none='loop'),
    'reduce_flat': dim_call(('input',), expand=False),
    'reduce_all': dim_call(('input',), none='all', expand=False),
    'quantile': dim_call(('input',), expand=False, front='q'),
    'cosine_similarity': dim_call(('x1', 'x2'), expand=False, rank_of='broadcast'),
    'repeat_interleave': dim_call(('input',), expand=False),
    'scatter_into': dim_call(('input', 'src')),
    'diagonal_scatter': dim_call(('input', 'src'), dims=('dim1', 'dim2')),
    'take': _take,
    'pointwise_loss': _pointwise_loss_function,
    'margin_loss': _margin_loss,
    'layer_norm': _affine_after(('trailing', _physical_call)),
    'group_norm': _affine_after(('channel', _merged_call)),
    'instance_norm': _affine_after(('channel', _instance_norm)),
    'batch_norm': _affine_after(('channel', _batch_norm)),
    'embedding': _embedding,
    'prelu': _prelu,
    'one_hot': _one_hot,
    'max_unpool': _max_unpool,
})
