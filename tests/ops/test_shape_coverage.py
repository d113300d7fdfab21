"""Issue 16 shape, view and indexing additions: what the op table cannot express, each
checked against torch (storage semantics, in-place metadata changes, version counters,
copies that share no memory, resize/set_, fill_diagonal_, nonzero_static)."""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck

LIBS = (dynagrad, torch)


def _t(lib, array, requires_grad=False):
    a = np.array(array, copy=True)
    t = torch.from_numpy(a) if lib is torch else dynagrad.tensor(a)
    return t.requires_grad_(requires_grad)


def _np(t):
    return t.detach().numpy()


def _same(run):
    """``run(lib)`` on both libraries; its results (arrays, numbers, tuples) compared."""
    d, t = run(dynagrad), run(torch)
    _compare(d, t)
    return d, t


def _compare(d, t):
    if isinstance(t, (tuple, list)):
        assert len(d) == len(t)
        for a, b in zip(d, t):
            _compare(a, b)
    elif isinstance(t, torch.Tensor):
        assert tuple(d.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(d), _np(t), rtol=1e-6, atol=1e-6)
    elif isinstance(t, np.ndarray):
        np.testing.assert_allclose(d, t, rtol=1e-6, atol=1e-6)
    else:
        assert d == t


def _raises_like(run, match):
    for lib in LIBS:
        with pytest.raises(RuntimeError, match=match):
            run(lib)


NAMES = ['adjoint', 'ravel', 'as_strided', 'as_strided_', 'is_same_size', 'detach', 'detach_',
         'broadcast_tensors', 'hsplit', 'vsplit', 'dsplit', 'unsafe_chunk', 'unsafe_split',
         'unsafe_split_with_sizes', 'diagflat', 'diagonal_scatter', 'select_scatter',
         'slice_scatter', 'as_strided_scatter', 'alias_copy', 'as_strided_copy', 'detach_copy',
         'diagonal_copy', 'expand_copy', 'narrow_copy', 'permute_copy', 'select_copy',
         'slice_copy', 'split_copy', 'split_with_sizes_copy', 'squeeze_copy', 't_copy',
         'transpose_copy', 'unbind_copy', 'unfold_copy', 'unsqueeze_copy', 'view_copy',
         'index_put_', 'index_reduce', 'nonzero_static', 'resize_as_']
METHODS = ['H', 'mH', 'adjoint', 'ravel', 'unfold', 'as_strided', 'as_strided_', 'squeeze_',
           'unsqueeze_', 'transpose_', 't_', 'swapaxes_', 'swapdims_', 'sum_to_size',
           'is_same_size', 'hsplit', 'vsplit', 'dsplit', 'unsafe_chunk', 'unsafe_split',
           'unsafe_split_with_sizes', 'diagflat', 'diagonal_scatter', 'select_scatter',
           'slice_scatter', 'as_strided_scatter', 'narrow_copy', 'index_reduce',
           'index_reduce_', 'nonzero_static', 'fill_diagonal_', 'resize_', 'resize_as_',
           'resize', 'set_', 'resize_as', 'storage_offset', 'is_set_to']


@pytest.mark.parametrize('name', NAMES)
def test_top_level_name(name):
    assert callable(getattr(torch, name))
    assert callable(getattr(dynagrad, name))


@pytest.mark.parametrize('name', METHODS)
def test_tensor_method(name):
    assert hasattr(torch.Tensor, name)
    assert hasattr(dynagrad.Tensor, name)


# -- in-place view ops ------------------------------------------------------------------------

INPLACE_VIEWS = [('squeeze_', ()), ('squeeze_', (1,)), ('squeeze_', ((0, 1),)),
                 ('unsqueeze_', (0,)), ('transpose_', (0, 2)), ('swapaxes_', (0, 1)),
                 ('swapdims_', (1, 2)), ('as_strided_', ((2, 2), (1, 2), 1))]


@pytest.mark.parametrize('op,args', INPLACE_VIEWS, ids=[f'{o}{a}' for o, a in INPLACE_VIEWS])
def test_inplace_view_history_version_and_gradient(op, args):
    data = np.arange(6, dtype=np.float32).reshape(3, 1, 2)

    def run(lib):
        x = _t(lib, data, requires_grad=True)
        y = x * 2
        alias = y.detach()                   # shares storage, keeps its own shape
        result = getattr(y, op)(*args)
        assert result is y
        weights = lib.arange(y.numel(), dtype=lib.float32).reshape(y.shape)
        (y * weights).sum().backward()
        return (tuple(y.shape), y.stride(), y.grad_fn.name(), y._version, tuple(alias.shape),
                x.grad)
    d, t = _same(run)
    assert d[1:3] == t[1:3]


def test_inplace_view_under_no_grad_and_on_leaf():
    for lib in LIBS:
        leaf = _t(lib, np.ones((2, 3), np.float32), requires_grad=True)
        with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
            leaf.t_()
        with lib.no_grad():
            leaf.t_()
        assert tuple(leaf.shape) == (3, 2) and leaf.grad_fn is None and leaf.is_leaf
        with pytest.raises(RuntimeError, match='t_\\(\\) expects a tensor with <= 2'):
            _t(lib, np.ones((2, 2, 2))).t_()


def test_inplace_view_of_view_then_write():
    def run(lib):
        x = _t(lib, np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
        y = x * 2
        v = y[:, :2]
        v.t_()
        v.mul_(3)
        y.sum().backward()
        return v._base is y, _np(y), x.grad
    _same(run)


def test_inplace_view_invalidates_saved_tensor():
    for lib in LIBS:
        y = _t(lib, np.ones((2, 3), np.float32), requires_grad=True) * 1
        z = y * y
        y.unsqueeze_(0)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            z.sum().backward()


# -- as_strided: the storage -------------------------------------------------------------------

def test_as_strided_offsets_count_from_the_storage():
    def run(lib):
        x = lib.arange(12.)
        y = x[2:]
        default = y.as_strided((2,), (1,))        # the view's own offset
        zero = y.as_strided((2,), (1,), 0)        # the start of the storage
        t = x.view(3, 4).t().as_strided((2, 2), (4, 1), 1)
        return default, zero, t
    _same(run)


def test_as_strided_is_a_view():
    def run(lib):
        x = lib.arange(12.)
        v = x.as_strided((2, 3), (1, 2), 3)
        v.mul_(-1)
        x.add_(100)
        return x, v, x._version, v._version
    _same(run)


def test_write_through_as_strided_view_gives_the_base_its_gradient():
    def run(lib):
        x = _t(lib, np.arange(12, dtype=np.float32), requires_grad=True)
        y = x * 2
        v = y.as_strided((2, 2), (1, 3), 2)
        v.mul_(3)
        (y * lib.arange(12.)).sum().backward()
        return y, x.grad, v.grad_fn.name(), y.grad_fn.name()
    d, t = run(dynagrad), run(torch)
    _compare(d[:2], t[:2])
    assert d[2] == 'AsStridedBackward0' == t[2]
    assert d[3] == 'CopySlices' and t[3].endswith('CopySlices')


def test_as_strided_overlapping_input_gradient():
    def run(lib):
        x = _t(lib, np.arange(4, dtype=np.float32), requires_grad=True)
        e = x.expand(3, 4)                          # every storage place seen 3 times
        out = e.as_strided((2, 3), (1, 1))
        out.backward(lib.ones(2, 3))
        return x.grad
    _same(run)


def test_as_strided_double_backward():
    x = dynagrad.tensor(np.random.default_rng(0).standard_normal(6), dtype=dynagrad.float64,
                        requires_grad=True)
    assert gradgradcheck(lambda t: t.as_strided((2, 3), (1, 2)) ** 2, (x,))


def test_as_strided_errors():
    _raises_like(lambda lib: lib.arange(12.).as_strided((2, 2), (1, 2), 20),
                 'out of bounds for storage of size 48')
    _raises_like(lambda lib: lib.arange(12.).as_strided((2,), (-1,), 3),
                 'Negative strides are not supported')
    _raises_like(lambda lib: lib.arange(12.).as_strided((2,), (1,), -1),
                 'invalid storage offset -1')
    _raises_like(lambda lib: lib.arange(12.).as_strided((2, 2), (1,)),
                 'mismatch in length of strides and shape')


def test_unfold_is_a_view():
    def run(lib):
        x = lib.arange(6.)
        w = x.unfold(0, 3, 1)
        x.mul_(2)
        return w, w._version, w.stride()
    d, t = _same(run)
    assert d[2] == t[2]


# -- scatter-into ops --------------------------------------------------------------------------

def test_as_strided_scatter_forward_and_src_gradient():
    def run(lib):
        x = _t(lib, np.arange(12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        src = _t(lib, -np.ones((2, 2), np.float32), requires_grad=True)
        out = lib.as_strided_scatter(x, src, (2, 2), (1, 2), 3)
        out.backward(lib.arange(12.).reshape(3, 4))
        return out, src.grad, out.grad_fn.name()
    _same(run)


def test_as_strided_scatter_input_gradient_is_the_true_one():
    """torch 2.13 gives the input the gradient of the region instead of the rest (its own
    gradcheck fails); dynagrad's matches finite differences."""
    rng = np.random.default_rng(1)
    x = dynagrad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    src = dynagrad.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    fn = lambda a, b: dynagrad.as_strided_scatter(a, b, (2, 2), (1, 2), 3)  # noqa: E731
    assert gradcheck(fn, (x, src))
    assert gradgradcheck(fn, (x, src))
    out = fn(x, src)
    out.backward(dynagrad.ones(3, 4))
    expected = np.ones(12)
    expected[[3, 4, 5, 6]] = 0
    np.testing.assert_array_equal(x.grad.numpy().ravel(), expected)


def test_scatter_into_dtype_of_src_follows_input():
    def run(lib):
        x = lib.zeros(3, 3)
        return lib.diagonal_scatter(x, lib.ones(3, dtype=lib.float64)).dtype == lib.float32
    _same(run)


# -- the copies: no shared memory ------------------------------------------------------------

COPIES = [('alias_copy', ()), ('as_strided_copy', ((2, 2), (1, 2))), ('diagonal_copy', ()),
          ('expand_copy', ((2, 3, 4),)), ('narrow_copy', (1, 1, 2)), ('permute_copy', ((1, 0),)),
          ('select_copy', (0, 1)), ('slice_copy', (1, 0, 2)), ('squeeze_copy', ()),
          ('t_copy', ()), ('transpose_copy', (0, 1)), ('unfold_copy', (1, 2, 1)),
          ('unsqueeze_copy', (0,)), ('view_copy', ((4, 3),)), ('detach_copy', ())]


@pytest.mark.parametrize('name,args', COPIES, ids=[c[0] for c in COPIES])
def test_copies_share_no_memory(name, args):
    def run(lib):
        x = lib.arange(12.).reshape(3, 4)
        out = getattr(lib, name)(x, *args)
        out.fill_(-1)
        return x, out, out._base is None, x._version
    _same(run)


@pytest.mark.parametrize('name,args', [('split_copy', (2, 1)), ('unbind_copy', (0,)),
                                       ('split_with_sizes_copy', ([1, 3], 1))])
def test_multi_output_copies_allow_inplace(name, args):
    def run(lib):
        x = _t(lib, np.arange(12, dtype=np.float32).reshape(3, 4), requires_grad=True)
        pieces = getattr(lib, name)(x * 1, *args)
        pieces[0].mul_(2)                       # views of a split refuse this; copies do not
        sum(p.sum() for p in pieces).backward()
        return x.grad, [p.grad_fn.name() for p in pieces]
    _same(run)


def test_detach_copy_has_no_derivative():
    for lib in LIBS:
        x = _t(lib, np.ones(3, np.float32), requires_grad=True)
        out = lib.detach_copy(x)
        assert out.requires_grad and out.grad_fn.name().endswith('NotImplemented')
        with pytest.raises(RuntimeError, match='derivative for aten::detach_copy is not '
                                               'implemented'):
            out.sum().backward()


def test_view_copy_to_dtype_reinterprets_bytes():
    def run(lib):
        x = lib.arange(6.).reshape(3, 2)
        return lib.view_copy(x, lib.int32)
    _same(run)


# -- small functions ---------------------------------------------------------------------------

def test_is_same_size_detach_and_unsafe_split():
    def run(lib):
        a, b = lib.ones(2, 3), lib.zeros(2, 3)
        x = _t(lib, np.arange(6, dtype=np.float32), requires_grad=True) * 1
        d = lib.detach(x)
        lib.detach_(x)
        pieces = lib.unsafe_split(lib.arange(6.), 2)
        pieces[0].mul_(10)                       # unsafe: allowed, and shares memory
        return (lib.is_same_size(a, b), lib.is_same_size(a, b.t()), d.requires_grad,
                x.requires_grad, x.grad_fn is None, pieces[0])
    _same(run)


def test_H_warns_on_0dim():
    for lib in LIBS:
        x = lib.tensor(2.0)
        with pytest.warns(UserWarning, match='Tensor.H is deprecated on 0-D tensors'):
            assert x.H.item() == 2.0


# -- resize, set_ ---------------------------------------------------------------------------

def test_resize_keeps_the_storage():
    def run(lib):
        x = lib.arange(6.)
        x.resize_(2, 2)
        small = x.clone()
        x.resize_(3, 3)
        grown = x.reshape(-1)[:6].clone()
        y = lib.arange(4.)
        v = y[1:]
        v.resize_(2)
        v.mul_(10)
        z = lib.zeros(3)
        z.resize_as_(lib.ones(2, 2))
        return small, grown, y, v._base is y, x._version, tuple(z.shape)
    _same(run)


def test_resize_refuses_tensors_that_require_grad():
    for lib in LIBS:
        for x in (_t(lib, np.ones(3, np.float32), requires_grad=True),
                  _t(lib, np.ones(3, np.float32), requires_grad=True) * 1):
            with pytest.raises(RuntimeError, match='cannot resize variables that require grad'):
                x.resize_(3)


def test_resize_out_of_place():
    def run(lib):
        x = _t(lib, np.arange(6, dtype=np.float32), requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            r = x.resize(3, 2)
        r.backward(lib.ones(3, 2))
        return r, x.grad, r.grad_fn.name(), [str(w.message) for w in caught]
    _same(run)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _raises_like(lambda lib: lib.ones(2).resize(3, 2),
                     "autograd's resize can only change the shape")


def test_set_points_at_the_source():
    def run(lib):
        a, b = lib.zeros(3), lib.arange(5.)
        a.set_(b)
        a.add_(1)
        c = lib.zeros(3)
        c.set_(b, 1, (2,), (2,))
        e = lib.zeros(3)
        e.set_()
        nl = _t(lib, np.zeros(3, np.float32), requires_grad=True) * 1
        nl.set_(b)
        return b, a._version, b._version, c, tuple(e.shape), nl.requires_grad
    _same(run)
    _raises_like(lambda lib: lib.zeros(3).set_(lib.arange(5)), 'Could not set tensor of type')
    _raises_like(lambda lib: lib.zeros(3, requires_grad=True).set_(lib.arange(5.)),
                 'leaf Variable that requires grad')


def _typed_storage(t):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')    # TypedStorage is deprecated, in both libraries
        return t.storage()


@pytest.mark.parametrize('kind', ['untyped', 'typed'])
def test_set_on_a_storage_views_its_memory(kind):
    def run(lib):
        owner = lib.arange(6.)
        storage = owner.untyped_storage() if kind == 'untyped' else _typed_storage(owner)
        whole = lib.tensor([])
        whole.set_(storage)
        grid = lib.tensor([])
        grid.set_(storage, 2, (2, 2), (1, 2))
        tail = lib.tensor([])
        tail.set_(storage, storage_offset=1, size=(3,))   # contiguous strides by default
        whole[0] = 100.        # writes are shared both ways
        owner[3] = -1.
        grid.mul_(2)
        shared = (whole.untyped_storage().data_ptr() == owner.untyped_storage().data_ptr(),
                  grid.untyped_storage().data_ptr() == owner.untyped_storage().data_ptr())
        return (owner, whole, grid, tail, grid.stride(), grid.storage_offset(),
                tail.stride(), tail.storage_offset(), shared)
    _same(run)


def test_set_on_an_untyped_storage_reads_its_bytes_as_the_tensors_dtype():
    def run(lib):
        owner = lib.tensor([1.0, -2.0, 0.5])
        as_int = lib.tensor([], dtype=lib.int32)
        as_int.set_(owner.untyped_storage())
        later = as_int[1:].as_strided((1,), (1,), 2)   # the storage counted in int32 elements
        fresh = lib.UntypedStorage(10)   # two whole float32s (torch leaves the bytes unset)
        on_fresh = lib.tensor([])
        on_fresh.set_(fresh)
        on_fresh.fill_(1.0)
        return (as_int, as_int.storage_offset(), later, on_fresh, fresh.tolist()[:8],
                as_int.dtype == lib.int32)
    _same(run)


def _f32_storage(lib):
    return lib.zeros(2).storage()


def _i64_storage(lib):
    return lib.zeros(2, dtype=lib.int64).storage()


def test_set_on_a_storage_refuses_bad_input_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for target, source in [(lambda lib: lib.tensor([], dtype=lib.int64), _f32_storage),
                               (lambda lib: lib.tensor([]), _i64_storage)]:
            _raises_like(lambda lib: target(lib).set_(source(lib)),
                         'Expected a Storage of type .* or an UntypedStorage, but got type')
    _raises_like(lambda lib: lib.tensor([]).set_(lib.zeros(2).untyped_storage(), -1, (1,)),
                 'invalid storage offset -1')
    _raises_like(lambda lib: lib.tensor([]).set_(lib.zeros(2).untyped_storage(), 0, (2,),
                                                 (1, 1)),
                 r'unequal size length \(1\) and stride length \(2\)')
    _raises_like(lambda lib: lib.zeros(2, requires_grad=True).set_(
        lib.zeros(2).untyped_storage()), 'leaf Variable that requires grad')
    with pytest.raises(TypeError, match='set_'):
        dynagrad.tensor([]).set_([1.0])
    with pytest.raises(RuntimeError, match='out of bounds for storage of size 8'):
        # torch grows the storage here (and every tensor on it); dynagrad's cannot grow
        dynagrad.tensor([]).set_(dynagrad.zeros(2).untyped_storage(), 0, (3,))


# -- fill_diagonal_, nonzero_static, index_put_ -----------------------------------------------

@pytest.mark.parametrize('shape,wrap', [((3, 4), False), ((7, 3), True), ((11, 3), True),
                                        ((7, 3), False), ((3, 3, 3), False), ((3, 5), True)])
def test_fill_diagonal(shape, wrap):
    _same(lambda lib: lib.zeros(*shape).fill_diagonal_(5, wrap=wrap))


def test_fill_diagonal_noncontiguous_and_gradient():
    _same(lambda lib: lib.zeros(3, 7).t().fill_diagonal_(2.0, wrap=True))

    def run(lib):
        x = _t(lib, np.ones((3, 3), np.float32), requires_grad=True)
        y = x * 2
        y.fill_diagonal_(0.0)
        y.sum().backward()
        return y, x.grad
    _same(run)
    _raises_like(lambda lib: lib.zeros(3).fill_diagonal_(1), 'dimensions must larger than 1')
    _raises_like(lambda lib: lib.zeros(3, 3, 4).fill_diagonal_(1),
                 'all dimensions of input must be of equal length')


@pytest.mark.parametrize('size,fill', [(4, -1), (1, 9), (0, -1)])
def test_nonzero_static(size, fill):
    _same(lambda lib: lib.nonzero_static(lib.tensor([[0, 1], [2, 0]]), size=size,
                                         fill_value=fill))


def test_nonzero_static_0dim_and_errors():
    _same(lambda lib: lib.tensor(3).nonzero_static(size=2))
    _raises_like(lambda lib: lib.nonzero_static(lib.tensor([1]), size=-1),
                 "'size' must be an non-negative integer")


def test_index_put_top_level():
    def run(lib):
        x = lib.zeros(3, 2)
        out = lib.index_put_(x, (lib.tensor([0, 2]),), lib.tensor([1.0, 2.0]), accumulate=True)
        return out is x, x
    _same(run)


def test_storage_offset_is_set_to_and_resize_as():
    def run(lib):
        x = lib.arange(6.)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            r = x.resize_as(lib.zeros(2, 3))
        return (x[2:].storage_offset(), x.view(2, 3).t().storage_offset(),
                x[1:].as_strided((2,), (2,)).storage_offset(), x.is_set_to(x),
                x.is_set_to(x.view(6)), x.is_set_to(x.view(2, 3)), x.detach().is_set_to(x),
                x.is_set_to(lib.arange(6.)), r, [str(w.message) for w in caught])
    _same(run)
