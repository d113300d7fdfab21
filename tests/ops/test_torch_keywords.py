"""Keyword names torch's argument parser accepts beyond a function's parameters, compared with
torch by trying the calls: NumPy's axis= and keepdims= (for dim= and keepdim=) on every
top-level function and Tensor method that has them (where torch's version goes through its
parser), the keyword of a *sizes parameter (x.view(size=...), flip(dims=...)), swapaxes'
axis0/axis1; and the functions torch writes in Python (split, norm, unique...) refuse them
as torch does."""
import inspect
import warnings

import pytest
import torch

import dynagrad as dg


def _outcome(call):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            r = call()
        except Exception as e:  # noqa: BLE001  (the outcome itself is what is compared)
            return (type(e),)
    if isinstance(r, tuple):
        r = r[0]
    if isinstance(r, (torch.Tensor, dg.Tensor)):
        return 'ok', tuple(r.shape), str(r.dtype).split('.')[1]
    return 'ok', type(r).__name__


def _with_dim():
    """(owner kind, name) of every dynagrad function and Tensor method with a ``dim`` or
    ``keepdim`` parameter that torch has under the same name."""
    out = []
    for kind, owner, towner in (('fn', dg, torch), ('method', dg.Tensor, torch.Tensor)):
        for name in sorted(dir(owner)):
            fn = getattr(owner, name, None)
            if name.startswith('_') or not callable(fn) or isinstance(fn, type) \
                    or not hasattr(towner, name):
                continue
            try:
                params = inspect.signature(fn).parameters
            except (TypeError, ValueError):
                continue
            if 'dim' in params or 'keepdim' in params:
                out.append((kind, name))
    return out


WITH_DIM = _with_dim()

# a call's leading arguments (after the tensor) where a function needs more than input, dim
EXTRA = {'select': (0,), 'narrow': (0, 1), 'roll': (1,), 'topk': (1,), 'kthvalue': (1,),
         'quantile': (0.5,), 'nanquantile': (0.5,), 'split': (1,), 'chunk': (2,),
         'tensor_split': (2,), 'repeat_interleave': (2,), 'unflatten': ((3, 1),),
         'index_select': ('index',), 'gather': ('index',), 'take_along_dim': ('index',),
         'index_add': ('index', 'src'), 'index_copy': ('index', 'src'),
         'index_fill': ('index', 1.0), 'scatter': ('index', 'src'),
         'scatter_add': ('index', 'src'), 'scatter_reduce': ('index', 'src', 'sum'),
         'index_reduce': ('index', 'src', 'prod'), 'diagonal': (), 'renorm': (2, 1),
         'cross': ('x',), 'cosine_similarity': ('x',), 'stack': (), 'cat': (),
         'concat': (), 'concatenate': (), 'unique_consecutive': (), 'norm': ('fro',)}


def _args(L, name, x):
    index = L.tensor([[0], [1]])
    return tuple({'index': index, 'src': L.ones(2, 1), 'x': x}.get(a, a)
                 for a in EXTRA.get(name, ()))


def _call(L, kind, name, keywords):
    x = L.arange(1.0, 7.0).reshape(2, 3)
    if name in ('stack', 'cat', 'concat', 'concatenate', 'hstack', 'vstack'):
        return getattr(L, name)([x, x], **keywords)
    args = _args(L, name, x)
    if kind == 'fn':
        return getattr(L, name)(x, *args, **keywords)
    return getattr(x, name)(*args, **keywords)


@pytest.mark.parametrize('keywords', [{'axis': 1}, {'axis': 1, 'keepdims': True},
                                      {'dim': 1, 'keepdims': True}], ids=str)
@pytest.mark.parametrize('kind,name', WITH_DIM, ids=[f'{k}.{n}' for k, n in WITH_DIM])
def test_numpy_keyword_aliases_match_torch(kind, name, keywords):
    plain = {('dim' if k == 'axis' else 'keepdim' if k == 'keepdims' else k): v
             for k, v in keywords.items()}
    # Where this generic call does not fit the function (torch refuses it without the
    # aliases too), dynagrad must refuse it the same way, with and without them.
    for call_keywords in (plain, keywords):
        t = _outcome(lambda: _call(torch, kind, name, call_keywords))
        d = _outcome(lambda: _call(dg, kind, name, call_keywords))
        assert d == t, call_keywords


def test_the_table_covers_the_common_reductions_and_shape_ops():
    names = {n for _, n in WITH_DIM}
    assert {'sum', 'mean', 'amax', 'max', 'softmax', 'cat', 'squeeze', 'unsqueeze', 'std',
            'cumsum', 'argmax', 'flip', 'logsumexp'} - {'flip'} <= names


SIZES = {
    'flip': lambda L, x: x.flip(dims=(1,)), 'fn_flip': lambda L, x: L.flip(x, dims=(0,)),
    'view': lambda L, x: x.view(size=(3, 2)), 'view_dtype': lambda L, x: x.view(
        dtype=L.int32), 'reshape': lambda L, x: x.reshape(shape=(3, 2)),
    'fn_reshape': lambda L, x: L.reshape(x, shape=(3, 2)),
    'permute': lambda L, x: x.permute(dims=(1, 0)),
    'fn_permute': lambda L, x: L.permute(x, dims=(1, 0)),
    'expand': lambda L, x: x.expand(size=(2, 2, 3)), 'repeat': lambda L, x: x.repeat(
        repeats=(1, 2)), 'tile': lambda L, x: x.tile(dims=(1, 2)),
    'new_zeros': lambda L, x: x.new_zeros(size=(2,)), 'new_ones': lambda L, x: x.new_ones(
        size=(2,)), 'new_empty': lambda L, x: x.new_empty(size=(2,)),
    'sum_to_size': lambda L, x: x.sum_to_size(size=(1, 3)),
    'resize_': lambda L, x: x.clone().resize_(size=(3, 2)),
    'swapaxes': lambda L, x: x.swapaxes(axis0=0, axis1=1),
    'fn_swapaxes': lambda L, x: L.swapaxes(x, axis0=0, axis1=1),
    'cat_axis': lambda L, x: L.cat([x, x], axis=1), 'concat_axis': lambda L, x: L.concat(
        [x, x], axis=1), 'concatenate_axis': lambda L, x: L.concatenate([x, x], axis=1),
    'sparse_size': lambda L, x: L.sparse_coo_tensor(L.tensor([[0, 1]]), L.tensor([1.0, 2.0]),
                                                    size=(3,)).to_dense(),
    'both_dims': lambda L, x: L.flip(x, (0,), dims=(1,)),
    'axis_and_dim': lambda L, x: L.sum(x, dim=1, axis=1),
    'split_axis': lambda L, x: x.split(1, axis=1), 'norm_axis': lambda L, x: x.norm(axis=1),
}


@pytest.mark.parametrize('name', list(SIZES))
def test_sizes_keywords_match_torch(name):
    def run(L):
        return _outcome(lambda: SIZES[name](L, L.arange(1.0, 7.0).reshape(2, 3)))
    assert run(dg) == run(torch)


def test_wrapped_functions_keep_identity_signature_and_pickle():
    import pickle
    # one wrapper per function: a method that is its function stays so (torch.sum differs
    # from Tensor.sum only by the out= the top-level form takes)
    assert dg.flip.__code__ is dg.Tensor.flip.__code__
    for fn in (dg.sum, dg.Tensor.sum, dg.flip):
        assert pickle.loads(pickle.dumps(fn)) is fn
    assert 'dim' in inspect.signature(dg.sum).parameters
    assert 'dim' in inspect.signature(dg.Tensor.sum).parameters
    x = dg.arange(6.0).reshape(2, 3)
    assert dg.sum(x, axis=1, keepdims=True).tolist() == x.sum(axis=1, keepdims=True).tolist() \
        == [[3.0], [12.0]]


def _signature_parameters(fn):
    params = inspect.signature(fn).parameters
    return set(params), any(p.kind == p.VAR_POSITIONAL for p in params.values())


def test_parameters_read_from_code_objects_match_inspect_signature():
    """install reads parameters from code objects (inspect.signature cost a sixth of the
    import); for every function it visits, the names and the *args flag are signature's."""
    from dynagrad.ops import keywords
    seen = 0
    owners = [dg.Tensor, dg, dg.nn.functional, dg.linalg, dg.special, dg.fft]
    for owner in owners:
        for name in dir(owner):
            fn = inspect.getattr_static(owner, name, None) if owner is dg.Tensor else \
                getattr(owner, name, None)
            if not inspect.isfunction(fn):
                continue
            try:
                expected = _signature_parameters(fn)
            except (TypeError, ValueError):
                continue
            names, star = keywords._parameters(fn)
            assert (set(names), star) == expected, name
            seen += 1
    assert seen > 1500

    def decorated(x, *sizes, dim=0, **kwargs):
        return x

    import functools

    @functools.wraps(decorated)
    def outer(*args, **kwargs):
        return decorated(*args, **kwargs)
    assert keywords._parameters(outer) == (('x', 'dim', 'sizes', 'kwargs'), True)
    outer.__signature__ = inspect.Signature([inspect.Parameter('axis', 1)])
    assert keywords._parameters(outer) == (('axis',), False)
    assert keywords._parameters(functools.partial(decorated, 1))[0] == ('sizes', 'dim',
                                                                          'kwargs')
