"""Shape ops: what the conformance table cannot express, still checked against torch.

Views share storage and version counter with their input (writes show through both
ways), in-place writes through views give the base the right gradient, argument forms
the table has no column for, and double backward through the multi-input/multi-output ops.
"""
import re
import warnings

import numpy as np
import pytest
import torch

import dynagrad

LIBS = (dynagrad, torch)


def _arange(lib, *shape, requires_grad=False):
    n = int(np.prod(shape))
    data = np.arange(n, dtype=np.float32).reshape(shape)
    t = torch.from_numpy(data.copy()) if lib is torch else dynagrad.tensor(data.copy())
    return t.requires_grad_(requires_grad)


def _np(t):
    return t.detach().numpy()


VIEW_OPS = {
    'diagonal': lambda x: (x.diagonal(1),),
    'diagonal_dims': lambda x: (x.unsqueeze(0).diagonal(0, 2, 1),),
    'narrow': lambda x: (x.narrow(1, 1, 2),),
    'split': lambda x: x.split(2, dim=1),
    'split_sizes': lambda x: x.split([1, 2], dim=0),
    'chunk': lambda x: x.chunk(2),
    'unbind': lambda x: x.unbind(1),
    'tensor_split': lambda x: x.tensor_split(2, dim=1),
    'unflatten': lambda x: (x.unflatten(1, (2, 2)),),
    'movedim': lambda x: (x.movedim(0, 1),),
}


@pytest.mark.parametrize('name', list(VIEW_OPS))
def test_views_share_storage_and_version(name):
    results = {}
    for lib in LIBS:
        x = _arange(lib, 3, 4)
        views = VIEW_OPS[name](x)
        x.add_(100)                       # a write to the base shows in every view
        for v in views:
            assert v._version == x._version == 1
        views[0].mul_(-1)                 # a write to a view shows in the base
        assert x._version == 2
        results[lib] = ([_np(v) for v in views], _np(x))
    (dv, dx), (tv, tx) = results[dynagrad], results[torch]
    np.testing.assert_array_equal(dx, tx)
    for a, b in zip(dv, tv):
        np.testing.assert_array_equal(a, b)


def test_copies_do_not_share_storage():
    for name in ('flip', 'roll', 'rot90', 'repeat', 'tril', 'diag', 'cat'):
        x = _arange(dynagrad, 3, 3)
        y = {'flip': lambda: x.flip(0), 'roll': lambda: x.roll(1, 0),
             'rot90': lambda: x.rot90(0), 'repeat': lambda: x.repeat(1, 1),
             'tril': lambda: x.tril(5), 'diag': lambda: x.diag(),
             'cat': lambda: dynagrad.cat([x])}[name]()
        before = y.numpy().copy()
        x.add_(1)
        np.testing.assert_array_equal(y.numpy(), before, err_msg=name)


def test_meshgrid_outputs_are_views():
    for lib in LIBS:
        a = _arange(lib, 3)
        g1, g2 = lib.meshgrid(a, _arange(lib, 2), indexing='ij')
        a.add_(1)
        assert g1._version == 1 and g2._version == 0
        np.testing.assert_array_equal(_np(g1)[:, 0], [1, 2, 3])


@pytest.mark.parametrize('make', [
    lambda y: y.diagonal(),
    lambda y: y.diagonal(-1),
    lambda y: y.narrow(0, 1, 2),
    lambda y: y.movedim(0, 1)[0],
    lambda y: y.unflatten(1, (2, 2))[:, 1],
], ids=['diagonal', 'diagonal_offset', 'narrow', 'movedim_select', 'unflatten_select'])
def test_inplace_through_view_gives_base_gradient(make):
    out = {}
    for lib in LIBS:
        x = _arange(lib, 3, 4, requires_grad=True)
        w = _arange(lib, 3, 4) * 0.5 - 1
        y = x * 1.5
        v = make(y)
        v.mul_(v.detach() + 2)            # y's history becomes CopySlices
        assert y.grad_fn.name().endswith('CopySlices')
        (y * w).sum().backward()
        out[lib] = (_np(y), _np(x.grad))
    for a, b in zip(out[dynagrad], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_inplace_on_split_outputs_without_grad_is_allowed():
    for lib in LIBS:
        x = _arange(lib, 4, 2)
        a, b = x.split(2)
        b.zero_()
        assert _np(x)[2:].sum() == 0


def test_inplace_on_multi_view_output_raises():
    x = torch.ones(4, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match='returns multiple views'):
        (x * 1).split(2)[0].mul_(2)
    x = dynagrad.ones(4, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match='returns multiple views'):
        (x * 1).split(2)[0].mul_(2)


@pytest.mark.parametrize('bad, exc', [
    (lambda lib: lib.cat(lib.ones(2, 3)), TypeError),
    (lambda lib: lib.cat([lib.ones(2), 3.0]), TypeError),
    (lambda lib: lib.stack(lib.ones(2, 3)), TypeError),
    (lambda lib: lib.ones(2, 3).repeat(), TypeError),
    (lambda lib: lib.ones(1, 2, 1).squeeze((0, 0)), RuntimeError),
    (lambda lib: lib.repeat_interleave(lib.tensor([1, -1])), RuntimeError),
    (lambda lib: lib.ones(3).repeat_interleave(lib.tensor([1.0, 2.0, 0.0])),
     NotImplementedError),
], ids=['cat_lone_tensor', 'cat_non_tensor', 'stack_lone_tensor', 'repeat_no_args',
        'squeeze_repeated_dims', 'repeat_interleave_negative_counts',
        'repeat_interleave_float_repeats'])
def test_errors_outside_table(bad, exc):
    for lib in LIBS:
        with pytest.raises(exc):
            bad(lib)


def test_repeat_interleave_counts_form():
    counts = [2, 0, 3]
    d = dynagrad.repeat_interleave(dynagrad.tensor(counts))
    t = torch.repeat_interleave(torch.tensor(counts))
    assert d.dtype == dynagrad.int64
    np.testing.assert_array_equal(d.numpy(), t.numpy())


def test_seq_ops_accept_lists_and_generators_of_forms():
    for lib in LIBS:
        a, b = _arange(lib, 2, 3), _arange(lib, 2, 3)
        assert tuple(lib.cat([a, b], 1).shape) == (2, 6)
        assert tuple(lib.stack((a, b), dim=-1).shape) == (2, 3, 2)
        assert len(lib.atleast_2d([a, b])) == 2
        assert len(lib.meshgrid([a[0], b[0]], indexing='xy')) == 2


def test_meshgrid_without_indexing_warns_and_uses_ij():
    for lib in LIBS:
        with pytest.warns(UserWarning, match='indexing'):
            g = lib.meshgrid(_arange(lib, 3), _arange(lib, 2))
        assert tuple(g[0].shape) == (3, 2)


@pytest.mark.parametrize('f', [
    lambda lib, a, b: sum((p * p).sum() for p in lib.cat([a, b], 1).split([1, 4, 1], dim=1)),
    lambda lib, a, b: (lib.stack([a, b]).unbind(2)[1] ** 3).sum(),
    lambda lib, a, b: (lib.diag_embed(a).diagonal(0, -2, -1) * b).pow(2).sum()
    + (a.tril() * b.triu(1)).sum(),
    lambda lib, a, b: (a.repeat(2, 2).flip(1).roll(1, 0).rot90() ** 2).sum() * b.trace(),
], ids=['cat_split', 'stack_unbind', 'diag_embed_diagonal_tri', 'repeat_flip_roll_rot90'])
def test_second_derivatives_match_torch(f):
    out = {}
    for lib in LIBS:
        rng = np.random.default_rng(0)
        arrays = rng.standard_normal((2, 2, 3))
        a, b = (lib.tensor(v, requires_grad=True) if lib is dynagrad
                else torch.tensor(v, requires_grad=True) for v in arrays)
        y = f(lib, a, b)
        ga, gb = lib.autograd.grad(y, [a, b], create_graph=True)
        h = lib.autograd.grad((ga * ga).sum() + (gb * b).sum(), [a, b])
        out[lib] = [_np(t) for t in (ga, gb) + tuple(h)]
    for x, y in zip(out[dynagrad], out[torch]):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12)


def test_trace_gradient_is_identity():
    for lib in LIBS:
        x = lib.ones(2, 2, requires_grad=True)
        x.trace().backward()
        np.testing.assert_array_equal(_np(x.grad), np.eye(2))


def test_no_warnings_from_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        x = dynagrad.ones(0, 3, requires_grad=True)
        dynagrad.cat([x, x]).sum().backward()
        x.chunk(3)[0].sum().backward()


# -- view(dtype): the same bytes read as another dtype ----------------------------------

@pytest.mark.parametrize('source, target, shape', [
    ('float32', 'int32', (2, 4)), ('float32', 'uint8', (2, 4)), ('float32', 'float16', (3,)),
    ('float32', 'float64', (2, 4)), ('int64', 'float64', (5,)), ('bool', 'uint8', (2, 2)),
    ('complex64', 'float32', (2, 3)), ('float32', 'complex64', (2, 4)),
    ('float16', 'int16', (4,)), ('bfloat16', 'int16', (4,)), ('float32', 'int32', ())])
def test_view_as_dtype_reinterprets_bytes_as_torch(source, target, shape):
    if 'bfloat16' in (source, target):
        pytest.importorskip('ml_dtypes')
    data = (np.arange(int(np.prod(shape)), dtype=np.float64) * 1.37 - 2).reshape(shape)
    t = torch.from_numpy(data).to(getattr(torch, source))
    d = dynagrad.from_numpy(data).to(getattr(dynagrad, source))
    theirs, mine = t.view(getattr(torch, target)), d.view(getattr(dynagrad, target))
    assert mine.dtype is getattr(dynagrad, target) and mine.shape == theirs.shape
    assert mine.stride() == theirs.stride()
    assert np.array_equal(np.asarray(mine._data).reshape(-1).view(np.uint8),
                          theirs.numpy().reshape(-1).view(np.uint8))


def test_view_as_dtype_shares_memory_and_version_and_has_no_gradient():
    for lib in LIBS:
        base = lib.arange(6.0).requires_grad_()
        v = base.detach().view(dtype=lib.int32)
        assert not base.view(lib.int32).requires_grad
        v[0] = 5
        assert base._version == 1 == v._version
        assert base[0].item() == torch.tensor(5, dtype=torch.int32).view(torch.float32).item()
    noncontig = _arange(dynagrad, 4, 4).t()
    assert noncontig.view(dynagrad.int32).stride() == _arange(torch, 4, 4).t().view(
        torch.int32).stride()


@pytest.mark.parametrize('make', [
    lambda lib: lib.tensor(1.0).view(lib.float16),
    lambda lib: lib.zeros(4, 4)[:, 1:].view(lib.float64),
    lambda lib: lib.zeros(4, 4)[:, 1:3].view(lib.float64),
    lambda lib: lib.zeros(4, 4).t().view(lib.float16)])
def test_view_as_dtype_refuses_what_torch_refuses(make):
    with pytest.raises(RuntimeError) as theirs:
        make(torch)
    with pytest.raises(RuntimeError, match=re.escape(str(theirs.value).split(" (")[0])):
        make(dynagrad)


def test_view_is_possible_exactly_where_torch_allows_it():
    """Random strided layouts (transposes, slices with steps, expanded dims) reshaped to
    random compatible shapes: dynagrad's view succeeds or refuses as torch's does."""
    rng = np.random.default_rng(29)
    for _ in range(600):
        shape = tuple(int(n) for n in rng.integers(1, 4, rng.integers(1, 5)))
        base = np.arange(int(np.prod(shape)) * 8, dtype=np.float32)
        t = torch.from_numpy(base)[::2][:int(np.prod(shape))].reshape(shape)
        perm = tuple(int(p) for p in rng.permutation(len(shape)))
        t = t.permute(perm)
        if rng.random() < 0.3:
            dim = int(rng.integers(0, t.ndim))
            t = t.unsqueeze(dim).expand(*t.shape[:dim], 2, *t.shape[dim:])
        if rng.random() < 0.3:
            dim = int(rng.integers(0, t.ndim))
            t = t.narrow(dim, 0, max(1, t.shape[dim] - 1))
        sizes = list(t.shape)
        target = [int(n) for n in rng.permutation(sizes)] if rng.random() < 0.5 else \
            [int(np.prod(sizes[:k])) for k in (1,)] + sizes[1:]
        if rng.random() < 0.5 and len(target) > 1:
            target = [target[0] * target[1]] + target[2:]
        mine = dynagrad.as_strided(dynagrad.from_numpy(base), t.shape, t.stride(),
                                   t.storage_offset())
        try:
            expected = t.view(target)
        except RuntimeError:
            with pytest.raises(RuntimeError, match='view size is not compatible'):
                mine.view(target)
            continue
        got = mine.view(target)
        assert got.shape == expected.shape
        # a size-1 dimension's stride is arbitrary (NumPy and torch pick different ones)
        assert [st for n, st in zip(got.shape, got.stride()) if n != 1] == \
            [st for n, st in zip(expected.shape, expected.stride()) if n != 1]
        assert got.tolist() == expected.tolist()
