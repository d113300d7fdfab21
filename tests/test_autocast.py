"""dynagrad.autocast against torch.autocast on the CPU: the API and its warnings, PyTorch's
op lists (every op of the conformance table under autocast, float32 and bfloat16 inputs:
same result dtype, same values at bfloat16 precision), a small model's loss and
gradients, the weight cache, what is not eligible, nesting, decorators and threads."""
import threading
import warnings

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad.autograd.autocast import autocast_state
from low_precision import build
from op_db import OPS

LIBS = (dg, torch)


def caught(fn):
    """(result, [(category name, message with torch spelled dynagrad)]) of ``fn()``."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        result = fn()
    return result, [(x.category.__name__, str(x.message).replace('torch.', 'dynagrad.'))
                    for x in w]


# -- the API ---------------------------------------------------------------------------------

def test_defaults_and_queries_as_torch():
    for lib in LIBS:
        assert str(lib.get_autocast_dtype('cpu')).endswith('bfloat16')
        assert str(lib.get_autocast_dtype('cuda')).endswith('float16')
        assert lib.is_autocast_enabled('cpu') is False
        assert lib.is_autocast_enabled() is False
        assert lib.amp.is_autocast_available('cpu') is True
        assert lib.is_autocast_cache_enabled() is True
        with lib.autocast('cpu'):
            assert lib.is_autocast_enabled('cpu') is True
            assert lib.is_autocast_enabled() is False           # no device: 'cuda'
            with lib.autocast('cpu', enabled=False):
                assert lib.is_autocast_enabled('cpu') is False
            assert lib.is_autocast_enabled('cpu') is True
            with lib.autocast('cpu', dtype=lib.float16):
                assert str(lib.get_autocast_dtype('cpu')).endswith('float16')
            assert str(lib.get_autocast_dtype('cpu')).endswith('bfloat16')
        assert lib.is_autocast_enabled('cpu') is False


def test_attributes_and_amp_alias():
    a, t = dg.amp.autocast('cpu'), torch.amp.autocast('cpu')
    assert dg.autocast is dg.amp.autocast
    assert (a.device, a._enabled, a._cache_enabled) == (t.device, t._enabled, t._cache_enabled)
    assert repr(a.fast_dtype) == repr(t.fast_dtype).replace('torch.', 'dynagrad.')
    a = dg.autocast('cpu', dtype=dg.float16, cache_enabled=False)
    assert a.fast_dtype is dg.float16 and a._cache_enabled is False


@pytest.mark.parametrize('make', [
    lambda lib: lib.autocast('cpu', dtype=lib.float32),
    lambda lib: lib.autocast('cpu', dtype=lib.float64),
    lambda lib: lib.autocast('cuda'),
    lambda lib: lib.amp.autocast('cuda', dtype=lib.bfloat16),
    lambda lib: lib.cuda.amp.autocast(),
    lambda lib: lib.cpu.amp.autocast(),
    lambda lib: lib.cpu.amp.autocast(dtype=lib.float16, enabled=False),
    lambda lib: lib.autocast('cpu', enabled=False),
], ids=['cpu_f32', 'cpu_f64', 'cuda', 'amp_cuda', 'cuda_amp', 'cpu_amp', 'cpu_amp_off',
        'disabled'])
def test_construction_warnings_and_enabled_as_torch(make):
    (d, dw), (t, tw) = caught(lambda: make(dg)), caught(lambda: make(torch))
    assert dw == tw
    assert d._enabled == t._enabled
    assert d.device == t.device
    assert str(d.fast_dtype)[9:] == str(t.fast_dtype)[6:]


def test_a_disabled_cuda_region_changes_nothing():
    x = dg.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with dg.cuda.amp.autocast():
            assert (x @ x.t()).dtype is dg.float32
            assert dg.is_autocast_enabled('cpu') is False
    assert autocast_state.active is False


def test_bad_device_types_as_torch():
    for lib in LIBS:
        with pytest.raises(ValueError, match='Expected `device_type` of type `str`'):
            lib.autocast(0)
        with pytest.raises(RuntimeError, match='Expected one of cpu, cuda'):
            lib.autocast('nonsense')
        with pytest.raises(RuntimeError, match='Expected one of cpu, cuda'):
            lib.get_autocast_dtype('nonsense')


def test_state_functions_as_torch():
    for lib in LIBS:
        lib.set_autocast_dtype('cpu', lib.float16)
        assert str(lib.get_autocast_dtype('cpu')).endswith('float16')
        lib.set_autocast_dtype('cpu', lib.bfloat16)
        assert lib.autocast_increment_nesting() == 1
        assert lib.autocast_decrement_nesting() == 0
        lib.set_autocast_cache_enabled(False)
        assert lib.is_autocast_cache_enabled() is False
        lib.set_autocast_cache_enabled(True)
        lib.set_autocast_enabled('cpu', True)
        assert lib.is_autocast_enabled('cpu')
        lib.set_autocast_enabled('cpu', False)
    assert autocast_state.active is False


@pytest.mark.parametrize('name,args', [
    ('is_autocast_cpu_enabled', ()), ('get_autocast_cpu_dtype', ()),
    ('get_autocast_gpu_dtype', ()), ('set_autocast_cpu_enabled', (False,)),
])
def test_deprecated_spellings_warn_as_torch(name, args):
    def call(lib):
        return getattr(lib, name)(*args)
    (d, dw), (t, tw) = caught(lambda: call(dg)), caught(lambda: call(torch))
    assert [c for c, _ in dw] == [c for c, _ in tw] == ['DeprecationWarning']
    assert dw[0][1] in tw[0][1]        # torch appends where in its C++ it was triggered
    assert str(d).replace('dynagrad.', '') == str(t).replace('torch.', '')


def test_decorator_nesting_and_exceptions_restore_the_state():
    @dg.autocast('cpu')
    def inside(x):
        assert dg.is_autocast_enabled('cpu')
        return x @ x.t()

    assert inside(dg.randn(2, 3)).dtype is dg.bfloat16
    assert inside.__name__ == 'inside'
    with pytest.raises(ZeroDivisionError):
        with dg.autocast('cpu', dtype=dg.float16):
            1 / 0
    assert not dg.is_autocast_enabled('cpu')
    assert dg.get_autocast_dtype('cpu') is dg.bfloat16
    assert autocast_state.active is False


def test_the_state_is_per_thread():
    seen = {}

    def other():
        seen['enabled'] = dg.is_autocast_enabled('cpu')
        seen['dtype'] = (dg.randn(2, 2) @ dg.randn(2, 2)).dtype

    with dg.autocast('cpu'):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert (dg.randn(2, 2) @ dg.randn(2, 2)).dtype is dg.bfloat16
    assert seen == {'enabled': False, 'dtype': dg.float32}


# -- what runs in which dtype: the op table --------------------------------------------------

def _first(result):
    return result[0] if isinstance(result, (tuple, list)) else result


def _run(lib, op, sample, low):
    call = ((lambda lib, x, *a, **k: getattr(x, op.method)(*a, **k)) if sample.method_only
            else op.call)
    args, kwargs, _ = build(lib, sample, 'bfloat16' if low else None, requires_grad=False)
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with lib.autocast('cpu'):
            return _first(call(lib, *args, **kwargs))


# (op, bfloat16 inputs?) -> reason dynagrad differs
KNOWN = {
    # torch's pinv is svd (float32) then a matmul (lower precision); dynagrad's is one op
    ('linalg.pinv', False): 'composite in torch',
    # torch raises for these bfloat16 inputs; dynagrad computes them
    ('nn.functional.affine_grid', True): 'torch error',
    ('nn.functional.embedding_bag', True): 'torch error',
    ('nn.functional.embedding_bag_scale_grad_by_freq', True): 'torch error',
    # torch's CPU grouped_mm needs 16-byte strides in bfloat16; dynagrad computes any width
    ('nn.functional.grouped_mm', True): 'torch error',
}
RANDOM = ('dropout', 'rrelu', 'rand', 'bernoulli', 'normal', 'multinomial', 'poisson')
AC_OPS = [op for op in OPS if any(
    any(a.dtype == np.float32 for a in s.tensor_arrays())
    and not any(a.dtype == np.float64 for a in s.tensor_arrays()) and not s.has_empty
    for s in op.get_samples())]


AC_CASES = [pytest.param(op, low, id=f'{op.name}-{"bfloat16" if low else "float32"}_in',
                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN[(op.name, low)])]
                         if (op.name, low) in KNOWN else [])
            for op in AC_OPS for low in (False, True)]


@pytest.mark.parametrize('op,low', AC_CASES)
def test_op_table_under_autocast_as_torch(op, low):
    """Same result dtype as torch; same values for float32 inputs (bfloat16 inputs' values
    are tests/test_bfloat16.py's)."""
    failures = []
    for s in op.get_samples():
        arrays = s.tensor_arrays()
        if (not any(a.dtype == np.float32 for a in arrays) or s.has_empty
                or any(a.dtype == np.float64 for a in arrays)):
            continue
        try:
            t = _run(torch, op, s, low)
        except Exception:  # noqa: BLE001 (torch decides what is an error)
            with pytest.raises(Exception):
                _run(dg, op, s, low)
            continue
        try:
            d = _run(dg, op, s, low)
        except Exception as e:  # noqa: BLE001
            failures.append(f'{s.desc}: dynagrad raised {type(e).__name__}: {e}')
            continue
        td, dd = str(t.dtype)[6:], str(d.dtype)[9:]
        if td != dd:
            failures.append(f'{s.desc}: dtype {dd}, torch {td}')
        elif not low and t.dtype.is_floating_point and not any(r in op.name for r in RANDOM):
            a, b = d.detach().float().numpy(), t.detach().float().numpy()
            if not np.allclose(a, b, rtol=2e-2, atol=2e-2, equal_nan=True):
                failures.append(f'{s.desc}: values differ by {np.nanmax(np.abs(a - b))}')
    assert not failures, '\n'.join(failures)


EXAMPLES = [  # (name, fn(lib, x) with x a float32 (4, 4) tensor, torch's result dtype)
    ('matmul', lambda lib, x: x @ x, 'bfloat16'),
    ('mm', lambda lib, x: lib.mm(x, x), 'bfloat16'),
    ('bmm', lambda lib, x: lib.bmm(x[None], x[None]), 'bfloat16'),
    ('addmm', lambda lib, x: lib.addmm(x, x, x), 'bfloat16'),
    ('baddbmm', lambda lib, x: lib.baddbmm(x[None], x[None], x[None]), 'bfloat16'),
    ('addbmm', lambda lib, x: lib.addbmm(x, x[None], x[None]), 'bfloat16'),
    ('linear', lambda lib, x: lib.nn.functional.linear(x, x, x[0]), 'bfloat16'),
    ('conv1d', lambda lib, x: lib.nn.functional.conv1d(x[None], x[:, :, None]), 'bfloat16'),
    ('einsum_contract', lambda lib, x: lib.einsum('ij,jk->ik', x, x), 'bfloat16'),
    ('einsum_outer', lambda lib, x: lib.einsum('i,j->ij', x[0], x[1]), 'float32'),
    ('tensordot', lambda lib, x: lib.tensordot(x, x, 1), 'bfloat16'),
    ('inner_1d', lambda lib, x: lib.inner(x[0], x[1]), 'float32'),
    ('mv', lambda lib, x: lib.mv(x, x[0]), 'float32'),
    ('dot', lambda lib, x: lib.dot(x[0], x[1]), 'float32'),
    ('addmv', lambda lib, x: lib.addmv(x[0], x, x[1]), 'float32'),
    ('sdpa', lambda lib, x: lib.nn.functional.scaled_dot_product_attention(
        x[None], x[None], x[None]), 'bfloat16'),
    ('prelu', lambda lib, x: lib.nn.functional.prelu(x, x[0, :1]), 'bfloat16'),
    ('relu', lambda lib, x: x.relu(), 'float32'),
    ('softmax', lambda lib, x: x.softmax(1), 'float32'),
    ('layer_norm', lambda lib, x: lib.nn.functional.layer_norm(x, (4,)), 'float32'),
    ('sum', lambda lib, x: x.sum(), 'float32'),
    ('prod', lambda lib, x: (x @ x).prod(), 'float32'),
    ('trace', lambda lib, x: (x @ x).trace(), 'float32'),
    ('mse_after_matmul', lambda lib, x: lib.nn.functional.mse_loss(x @ x, x), 'float32'),
    ('cross_entropy', lambda lib, x: lib.nn.functional.cross_entropy(
        x @ x, lib.tensor([0, 1, 2, 3])), 'float32'),
    ('cdist', lambda lib, x: lib.cdist(x @ x, x), 'float32'),
    ('pad_reflect', lambda lib, x: lib.nn.functional.pad((x @ x)[None], (1, 1), 'reflect'),
     'float32'),
    ('pad_constant', lambda lib, x: lib.nn.functional.pad((x @ x)[None], (1, 1)),
     'bfloat16'),
    ('inv', lambda lib, x: lib.linalg.inv((x @ x) + 4 * lib.eye(4)), 'float32'),
    ('cat_promote', lambda lib, x: lib.cat([x @ x, x]), 'float32'),
    ('stack_promote', lambda lib, x: lib.stack([x, x @ x]), 'float32'),
    ('index_copy', lambda lib, x: (x @ x).index_copy(0, lib.tensor([0]), x[:1]), 'float32'),
    ('matmul_float64', lambda lib, x: x.double() @ x.double(), 'float64'),
    ('prod_explicit_dtype', lambda lib, x: (x @ x).prod(dtype=lib.float64), 'float64'),
    ('addmm_inplace', lambda lib, x: x.clone().addmm_(x, x), 'float32'),
]


@pytest.mark.parametrize('name,fn,expected', EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_op_lists_by_example(name, fn, expected):
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    results = []
    for lib in LIBS:
        with lib.autocast('cpu'):
            results.append(fn(lib, lib.tensor(x)))
    d, t = results
    assert str(t.dtype) == 'torch.' + expected
    assert str(d.dtype) == 'dynagrad.' + expected
    np.testing.assert_allclose(d.float().numpy(), t.float().numpy(), rtol=2e-2, atol=2e-2)


def test_float16_autocast():
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    out = []
    for lib in LIBS:
        with lib.autocast('cpu', dtype=lib.float16):
            y = lib.tensor(x) @ lib.tensor(x)
            out.append((y, lib.nn.functional.mse_loss(y, lib.tensor(x))))
    for d, t in zip(*out):
        assert str(d.dtype)[9:] == str(t.dtype)[6:]
        np.testing.assert_allclose(d.float().numpy(), t.float().numpy(), rtol=2e-3, atol=2e-3)


# -- a model, and the weights' casts ----------------------------------------------------------

def _model(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.fc1 = nn.Linear(4 * 6 * 6, 16)
            self.ln = nn.LayerNorm(16)
            self.fc2 = nn.Linear(16, 5)

        def forward(self, x):
            x = lib.relu(self.conv(x)).flatten(1)
            x = nn.functional.gelu(self.ln(self.fc1(x)))
            return self.fc2(x)
    return Net()


@pytest.mark.parametrize('dtype', ['bfloat16', 'float16'])
def test_model_loss_and_float32_gradients_as_torch(dtype):
    torch.manual_seed(0)
    tm, dm = _model(torch), _model(dg)
    dm.load_state_dict({k: dg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 6, 6)).astype(np.float32)
    y = rng.integers(0, 5, 8)
    losses = {}
    for lib, m in ((torch, tm), (dg, dm)):
        with lib.autocast('cpu', dtype=getattr(lib, dtype)):
            out = m(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(out, lib.tensor(y))
        assert str(out.dtype).endswith(dtype)
        assert str(loss.dtype).endswith('float32')
        loss.backward()
        losses[lib] = loss.item()
    assert losses[dg] == pytest.approx(losses[torch], rel=1e-3)
    for (name, tp), dp in zip(tm.named_parameters(), dm.parameters()):
        assert dp.grad.dtype is dg.float32, name
        np.testing.assert_allclose(dp.grad.numpy(), tp.grad.numpy(), rtol=2e-2, atol=2e-3,
                                   err_msg=name)


def test_a_weight_used_twice_is_cast_once_per_region():
    lin = dg.nn.Linear(4, 4)
    x = dg.randn(2, 4)

    def cast_node(y):   # linear's inputs: x cast, weight cast, bias cast
        return y.grad_fn.next_functions[1][0]

    with dg.autocast('cpu'):
        a, b = lin(x), lin(x)
        assert cast_node(a) is cast_node(b)
        assert type(cast_node(a)).__name__ == 'ToCopyBackward0'
    with dg.autocast('cpu'):
        c = lin(x)
    assert cast_node(c) is not cast_node(a)          # the cache ends with the region
    with dg.autocast('cpu', cache_enabled=False):
        assert cast_node(lin(x)) is not cast_node(lin(x))
    (a.sum() + b.sum()).backward()
    assert lin.weight.grad.dtype is dg.float32
    tl = torch.nn.Linear(4, 4)
    with torch.autocast('cpu'):
        ta, tb = tl(torch.randn(2, 4)), tl(torch.randn(2, 4))
        assert ta.grad_fn.next_functions[1][0] is tb.grad_fn.next_functions[1][0]


def test_the_hot_path_flag_is_set_only_inside_enabled_regions():
    assert autocast_state.active is False
    with dg.autocast('cpu'):
        assert autocast_state.active is True
        with dg.autocast('cpu', enabled=False):
            assert autocast_state.active is False
        assert autocast_state.active is True
    assert autocast_state.active is False


# -- custom Functions ---------------------------------------------------------------------

def test_custom_fwd_casts_inputs_and_custom_bwd_reuses_the_state():
    for lib in LIBS:
        class Square(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type='cpu', cast_inputs=lib.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.inner = lib.is_autocast_enabled('cpu')
                return x * x

            @staticmethod
            @lib.amp.custom_bwd(device_type='cpu')
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g

        x = lib.ones(3, dtype=lib.bfloat16, requires_grad=True)
        with lib.autocast('cpu'):
            y = Square.apply(x)
        assert str(y.dtype).endswith('float32')
        y.sum().backward()
        assert str(x.grad.dtype).endswith('bfloat16')
        assert x.grad.float().tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match='device_type'):
        dg.amp.custom_fwd(lambda ctx, x: x)
    (_, dw), (_, tw) = (caught(lambda: lib.cuda.amp.custom_fwd(lambda ctx, x: x))
                        for lib in LIBS)
    assert dw == tw


@pytest.mark.parametrize('cls', ['LSTM', 'RNN', 'GRU'])
def test_recurrent_layers_as_torch(cls):
    """LSTM and RNN layers run in lower precision (PyTorch's mkldnn_rnn_layer), GRU in the
    dtypes it is given."""
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(4, 3, num_layers=2, bidirectional=True)
    dm = getattr(dg.nn, cls)(4, 3, num_layers=2, bidirectional=True)
    dm.load_state_dict({k: dg.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 4)).astype(np.float32)
    outs = {}
    for lib, m in ((torch, tm), (dg, dm)):
        with lib.autocast('cpu'):
            o, h = m(lib.tensor(x))
        outs[lib] = [o] + list(h if isinstance(h, tuple) else (h,))
    for d, t in zip(outs[dg], outs[torch]):
        assert str(d.dtype)[9:] == str(t.dtype)[6:]
        np.testing.assert_allclose(d.detach().float().numpy(), t.detach().float().numpy(),
                                   rtol=3e-2, atol=3e-2)
