"""Top-level switches, constants, layouts and memory formats, DLPack, broadcast_shapes and
the tensor-kind predicates, each against torch."""
import math
import pickle
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg


def test_constants_match_torch():
    assert (dg.e, dg.pi, dg.inf) == (torch.e, torch.pi, torch.inf)
    assert math.isnan(dg.nan) and dg.newaxis is torch.newaxis is None


def test_layout_and_memory_format_objects():
    assert repr(dg.strided) == 'dynagrad.strided' and isinstance(dg.strided, dg.layout)
    assert dg.randn(2).layout is dg.strided
    for name in ('contiguous_format', 'channels_last', 'channels_last_3d', 'preserve_format'):
        fmt = getattr(dg, name)
        assert isinstance(fmt, dg.memory_format) and repr(fmt) == f'dynagrad.{name}'
        assert pickle.loads(pickle.dumps(fmt)) is fmt


@pytest.mark.parametrize('shape,fmt', [((2, 3, 4, 5), 'channels_last'),
                                       ((2, 3, 2, 4, 5), 'channels_last_3d'),
                                       ((2, 3, 4, 5), 'contiguous_format')])
def test_contiguous_in_a_memory_format_matches_torch_strides_and_gradient(shape, fmt):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    d = dg.tensor(a, requires_grad=True)
    tc = t.contiguous(memory_format=getattr(torch, fmt))
    dc = d.contiguous(memory_format=getattr(dg, fmt))
    assert dc.stride() == tc.stride()
    for f in ('contiguous_format', 'channels_last', 'channels_last_3d'):
        assert (dc.is_contiguous(memory_format=getattr(dg, f))
                == tc.is_contiguous(memory_format=getattr(torch, f)))
    assert dc.dim_order() == tc.dim_order()
    np.testing.assert_array_equal(dc.detach().numpy(), tc.detach().numpy())
    (dc * dc).sum().backward()
    (tc * tc).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    # already in the format: the same tensor back, as torch
    assert (dc.contiguous(memory_format=getattr(dg, fmt)) is dc) == (
        tc.contiguous(memory_format=getattr(torch, fmt)) is tc)


def test_channels_last_on_the_wrong_rank_is_torchs_error():
    with pytest.raises(RuntimeError, match='required rank 4 tensor to use channels_last'):
        torch.ones(2, 3).contiguous(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match='required rank 4 tensor to use channels_last'):
        dg.ones(2, 3).contiguous(memory_format=dg.channels_last)
    assert dg.ones(2, 3).is_contiguous(memory_format=dg.channels_last) is False


def test_deterministic_switches_as_torch():
    try:
        for lib in (torch, dg):
            assert lib.are_deterministic_algorithms_enabled() is False
            lib.use_deterministic_algorithms(True, warn_only=True)
            assert lib.are_deterministic_algorithms_enabled() is True
            assert lib.is_deterministic_algorithms_warn_only_enabled() is True
            assert lib.get_deterministic_debug_mode() == 1
            lib.set_deterministic_debug_mode('error')
            assert lib.get_deterministic_debug_mode() == 2
            lib.set_deterministic_debug_mode(0)
            assert lib.are_deterministic_algorithms_enabled() is False
            with pytest.raises(TypeError, match="must be bool, not int"):
                lib.use_deterministic_algorithms(1)
            with pytest.raises(RuntimeError, match='expected one of `default`, `warn`, `error`'):
                lib.set_deterministic_debug_mode('bad')
            with pytest.raises(RuntimeError, match='expected 0, 1, or 2, but got 5'):
                lib.set_deterministic_debug_mode(5)
    finally:
        torch.use_deterministic_algorithms(False)
        dg.use_deterministic_algorithms(False)


def test_warn_always_and_anomaly_switches():
    for lib in (torch, dg):
        assert lib.is_warn_always_enabled() is False
        with pytest.raises(RuntimeError, match='setWarnOnlyOnce expects a bool, but got int'):
            lib.set_warn_always(1)
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(False)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            lib.set_anomaly_enabled(True, check_nan=False)
        assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
        lib.set_anomaly_enabled(False)
        assert not lib.is_anomaly_enabled()
    assert dg.autograd.is_anomaly_enabled() is False


def test_set_default_tensor_type_is_deprecated_and_float_only():
    try:
        for lib in (torch, dg):
            with pytest.warns(UserWarning, match='set_default_tensor_type.. is deprecated'):
                lib.set_default_tensor_type(f'{lib.__name__}.DoubleTensor')
            assert lib.get_default_dtype() == lib.float64
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')   # torch warns once per process
                with pytest.raises(TypeError, match='only floating-point types are supported'):
                    lib.set_default_tensor_type(lib.IntTensor)
                lib.set_default_tensor_type(lib.FloatTensor)
            assert lib.get_default_dtype() == lib.float32
    finally:
        torch.set_default_dtype(torch.float32)
        dg.set_default_dtype(dg.float32)


@pytest.mark.parametrize('shapes', [((2, 1), (1, 3)), ((1,), 4), ((5, 1, 3), (2, 1), ()),
                                    ((0, 1), (3,))])
def test_broadcast_shapes_matches_torch(shapes):
    assert tuple(dg.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert isinstance(dg.broadcast_shapes(*shapes), dg.Size)


def test_broadcast_shapes_errors_match_torch():
    for shapes, exc in ((((2, 3), (4, 3)), RuntimeError), (((2, 1), (1, 3), 5), RuntimeError),
                        (((2, -1),), ValueError)):
        with pytest.raises(exc) as t_err:
            torch.broadcast_shapes(*shapes)
        with pytest.raises(exc) as d_err:
            dg.broadcast_shapes(*shapes)
        assert str(d_err.value) == str(t_err.value)


def test_dlpack_shares_memory_both_ways():
    a = np.arange(4.0)
    t = dg.from_dlpack(a)
    t[0] = 5
    assert a[0] == 5 and t.dtype == dg.float64
    x = dg.ones(3)
    tt = torch.from_dlpack(x)
    tt[1] = 7
    assert x.tolist() == [1, 7, 1]
    y = dg.from_dlpack(dg.to_dlpack(x))
    y[2] = 9
    assert x.tolist() == [1, 7, 9]
    z = dg.from_dlpack(torch.arange(4, dtype=torch.int32))
    assert z.dtype == dg.int32 and z.tolist() == [0, 1, 2, 3]
    c = dg.from_dlpack(a, copy=True)
    c[1] = -1
    assert a[1] == 1


def test_device_facts_and_predicates_match_torch():
    t, d = torch.ones(2), dg.ones(2)
    for name in ('is_sparse', 'is_sparse_csr', 'is_quantized', 'is_nested', 'is_mkldnn',
                 'is_vulkan', 'is_xla', 'is_maia'):
        assert getattr(d, name) is getattr(t, name) is False
    assert d.is_pinned() is t.is_pinned() is False
    assert d.is_distributed() is t.is_distributed() is False
    assert d.to_dense() is d and t.to_dense() is t
    assert d.to_dense(dg.float64).dtype == dg.float64
    assert dg.get_device(d) == torch.get_device(t) == -1
    assert dg.is_distributed(d) is torch.is_distributed(t) is False
    assert dg.is_inference(d) is torch.is_inference(t) is False
    assert dg.is_storage(d) is torch.is_storage(t) is False
    assert dg.get_device_module('cpu') is dg.cpu and dg.get_device_module() is dg.cpu
    assert dg.get_device_module(dg.device('cuda')) is dg.cuda
    assert dg.set_flush_denormal(False) is False
    assert dg.init_num_threads() is None
    assert issubclass(dg.OutOfMemoryError, RuntimeError)
    assert issubclass(dg.AcceleratorError, RuntimeError)
    assert dg.GradScaler is dg.amp.GradScaler


def test_thread_safe_generator_is_none_outside_thread_workers():
    assert dg.thread_safe_generator() is None and torch.thread_safe_generator() is None


def test_dlpack_imports_are_writable_as_in_torch_whatever_the_numpy_release():
    # NumPy before 2.3 imports every DLPack producer read-only, and any NumPy imports an
    # unversioned capsule (torch.to_dlpack's) read-only; torch.from_dlpack writes through
    source = torch.arange(4.0)
    mine = dg.from_dlpack(source)
    mine[0] = 7
    assert source.tolist() == [7.0, 1.0, 2.0, 3.0]
    legacy = dg.from_dlpack(torch.utils.dlpack.to_dlpack(source))
    legacy[1] = 8
    theirs = torch.from_dlpack(torch.utils.dlpack.to_dlpack(source))
    theirs[2] = 9
    assert source.tolist() == [7.0, 8.0, 9.0, 3.0]
