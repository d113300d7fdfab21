"""Every row of ``tests/op_db.py`` checked against torch the same way.

Per (op, sample): forward value, dtype and shape (function, alias, method and operator
forms); gradients of every float input for a random upstream gradient shared with torch;
grad_fn names; ``gradcheck`` and ``gradgradcheck`` in float64 on small samples; the
in-place variant on a non-leaf (values, gradients, version-counter errors). Per error
sample: the exception type torch raises. The forward check also compares warnings: where
torch warns (a deprecated argument, a size mismatch that broadcasts), dynagrad warns too,
and where it does not, neither does dynagrad; the other checks silence what the forward
check has compared.
"""
import contextlib
import warnings
import zlib

import numpy as np
import pytest
import torch

import dynagrad
from dynagrad.autograd import gradcheck, gradgradcheck

import op_db
from op_db import OPS, NC, DT, STATS

LIBS = (dynagrad, torch)
pytestmark = [pytest.mark.filterwarnings('ignore:The use of `x.T`:UserWarning'),
              pytest.mark.filterwarnings('ignore::UserWarning'),
              pytest.mark.filterwarnings('ignore::FutureWarning')]
GRADCHECK_MAX_NUMEL = 12
GRADGRADCHECK_MAX_NUMEL = 8

FWD_TOL = {'float32': dict(rtol=1e-5, atol=1e-6), 'float64': dict(rtol=1e-10, atol=1e-12),
           'float16': dict(rtol=1e-3, atol=1e-3)}
GRAD_TOL = {'float32': dict(rtol=1e-4, atol=1e-5), 'float64': dict(rtol=1e-9, atol=1e-11)}


# -- building inputs -----------------------------------------------------------------------

# The device dynagrad's tensors are made on: None (the CPU) unless a run through a device
# backend says otherwise (tests/cuda: the stand-in for CuPy, or a GPU).
DEVICE = {'dynagrad': None, 'torch': None}


def _tensor(lib, array):
    array = np.array(array, copy=True)
    if lib is torch:
        t = torch.from_numpy(array)
        return t if DEVICE['torch'] is None else t.to(DEVICE['torch'])
    return dynagrad.tensor(array, device=DEVICE['dynagrad'])


@contextlib.contextmanager
def on_device(dynagrad_device, torch_device=None):
    """The checks below with dynagrad's tensors made on ``dynagrad_device`` (and torch's on
    ``torch_device``, None: the CPU); the rows that make tensors themselves (running
    statistics, index tensors) make them there too, as a program that sets its default
    device does."""
    DEVICE.update(dynagrad=dynagrad_device, torch=torch_device)
    dynagrad.set_default_device(dynagrad_device)
    torch.set_default_device(torch_device)
    try:
        yield
    finally:
        dynagrad.set_default_device(None)
        torch.set_default_device(None)
        DEVICE.update(dynagrad=None, torch=None)


def device_rows(known=None):
    """Every row that is not an expected failure on the CPU, as (op, sample, index)
    parameters; ``known``: op name -> why its rows fail on the device (strict xfails)."""
    known = known or {}
    out = []
    for op in OPS:
        for i, sample in enumerate(op.get_samples()):
            if sample.xfail:
                continue
            marks = ()
            if op.name in known:
                marks = pytest.mark.xfail(strict=True, reason=known[op.name])
            out.append(pytest.param(op, sample, i, id=f'{op.name}-{i}-{sample.desc}',
                                    marks=marks))
    return out


def check_row(op, sample, i):
    """A row's forward (every form) and, where it has one, its backward."""
    test_forward(op, sample, i)
    if _wants_grad(op, sample):
        test_backward(op, sample, i)


def host(t):
    """A tensor's values as a NumPy array, copied off its device when it has one."""
    return t.detach().cpu().numpy()


def build(lib, sample, *, requires_grad=None, float64=False, leaves_in=None, clone_first=False):
    """The sample's args on ``lib``: (args, kwargs, leaves, first) where ``first`` is the
    tensor the first argument was made from (its clone when ``clone_first``)."""
    rg = sample.requires_grad if requires_grad is None else requires_grad
    leaves = []
    supplied = iter(leaves_in) if leaves_in is not None else None
    first = [None]

    def leaf(array):
        if supplied is not None:
            t = next(supplied)
        else:
            if float64 and array.dtype.kind == 'f':
                array = array.astype(np.float64)
            t = _tensor(lib, array)
            if rg and array.dtype.kind == 'f':
                t.requires_grad_(True)
        leaves.append(t)
        return t

    def conv(a, pos):
        if isinstance(a, (NC, np.ndarray)) and pos is not None:
            t = leaf(a.array if isinstance(a, NC) else a)
            if pos == 0:
                if clone_first:
                    t = t.clone()
                first[0] = t
            return a.view(t) if isinstance(a, NC) else t
        if isinstance(a, np.ndarray):           # inside a key: an index tensor
            return _tensor(lib, a)
        if isinstance(a, tuple):
            return tuple(conv(x, None) for x in a)
        if isinstance(a, list):
            return [conv(x, None) for x in a]
        if isinstance(a, DT):
            return getattr(lib, a.name)
        return a

    args = tuple(conv(a, i) for i, a in enumerate(sample.args))
    kwargs = {k: conv(v, None) for k, v in sample.kwargs.items()}
    return args, kwargs, leaves, first[0]


def is_tensor_arg(a):
    return isinstance(a, (NC, np.ndarray))


def _method(op):
    return lambda lib, x, *a, **k: getattr(x, op.method)(*a, **k)


def primary(op, sample):
    """The form the gradient checks use: the function form, or the method for method-only
    samples."""
    return _method(op) if sample.method_only else op.call


def variants(op, sample):
    """(name, call(lib, *args, **kwargs)) for every form of the op this sample can use."""
    if sample.method_only:
        return [('method', _method(op))]
    out = [('fn', op.call)]
    for alias in op.aliases:
        out.append((alias, lambda lib, *a, _n=alias, **k: getattr(lib, _n)(*a, **k)))
    first_is_tensor = sample.args and is_tensor_arg(sample.args[0])
    if op.method and first_is_tensor and (op.fn is not None or op.method != op.name):
        out.append(('method', _method(op)))
    if op.operator and first_is_tensor and not sample.kwargs:
        out.append(('operator', lambda lib, *a: op.operator(*a)))
    return out


def rng_for(*parts):
    return np.random.default_rng(zlib.crc32('/'.join(map(str, parts)).encode()))


# -- comparing ------------------------------------------------------------------------------

def dtype_name(t):
    return str(t.dtype).replace('torch.', '').replace('dynagrad.', '')


def node_name(fn):
    return None if fn is None else fn.name().replace('torch::autograd::', '')


def assert_same(actual, expected, tol=FWD_TOL, what='result'):
    assert isinstance(actual, dynagrad.Tensor), f'{what}: got {type(actual).__name__}'
    assert dtype_name(actual) == dtype_name(expected), f'{what} dtype'
    assert tuple(actual.shape) == tuple(expected.shape), f'{what} shape'
    if DEVICE['dynagrad'] is not None:
        assert actual.device.type == DEVICE['dynagrad'], f'{what} device: {actual.device}'
    a = host(actual)
    e = host(expected)
    kind = dtype_name(expected)
    if kind in tol:
        np.testing.assert_allclose(a, e, equal_nan=True, err_msg=what, **tol[kind])
    else:
        np.testing.assert_array_equal(a, e, err_msg=what)


def outputs(result):
    """An op's result as a list of tensors (ops like max(dim) and split return several)."""
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def assert_same_outputs(actual, expected, what='result'):
    a, e = outputs(actual), outputs(expected)
    assert len(a) == len(e), f'{what}: {len(a)} outputs, torch has {len(e)}'
    if isinstance(expected, tuple) and hasattr(expected, '_fields'):
        assert getattr(actual, '_fields', None) == expected._fields, f'{what}: named fields'
    for k, (x, y) in enumerate(zip(a, e)):
        assert_same(x, y, what=what if len(a) == 1 else f'{what}, output {k}')
        assert x.requires_grad == y.requires_grad, f'{what}, output {k}: requires_grad'


def differentiable_outputs(result):
    return [o for o in outputs(result) if o.requires_grad]


def assert_grads(d_leaves, t_leaves, sample):
    # float32 anywhere in the computation bounds the precision of every gradient
    tol = GRAD_TOL if sample.all_float64 else {k: GRAD_TOL['float32'] for k in GRAD_TOL}
    for i, (d, t) in enumerate(zip(d_leaves, t_leaves)):
        if not t.dtype.is_floating_point:
            continue
        if t.grad is None:
            assert d.grad is None or not np.any(host(d.grad)), f'grad of input {i}'
            continue
        assert d.grad is not None, f'grad of input {i} is None; torch has one'
        assert_same(d.grad, t.grad, tol, f'grad of input {i}')


def upstream(out, *parts):
    """The same random upstream gradient for both libraries."""
    g = rng_for(*parts).standard_normal(tuple(out.shape))
    g = np.asarray(g, dtype=dtype_name(out))
    return _tensor(dynagrad, g), _tensor(torch, g)


def same_exception(run, *, exc=None):
    """Run ``run(lib)`` on both libraries: both succeed (results returned) or both raise."""
    try:
        t_out = run(torch)
    except Exception as e:  # noqa: BLE001 (torch decides what is an error)
        t_exc = e
    else:
        t_exc = None
    if t_exc is not None:
        kind = exc or type(t_exc)
        if exc is not None:
            assert isinstance(t_exc, exc), f'torch raised {type(t_exc).__name__}: {t_exc}'
        for base in (IndexError, TypeError, ValueError, RuntimeError):
            if isinstance(t_exc, base):
                kind = base
                break
        with pytest.raises(kind):
            run(dynagrad)
        return None, None
    return run(dynagrad), t_out


# -- parametrization ------------------------------------------------------------------------

def _params(select, kind):
    out = []
    for op in OPS:
        for i, s in enumerate(op.get_samples()):
            if select(op, s):
                marks = ()
                if kind in s.xfail:
                    marks = pytest.mark.xfail(strict=True, reason=s.xfail[kind])
                out.append(pytest.param(op, s, i, id=f'{op.name}-{i}-{s.desc}', marks=marks))
    return out


def _wants_grad(op, s):
    return op.differentiable and s.requires_grad and s.has_float_input


ALL = _params(lambda op, s: True, 'forward')
GRAD = _params(_wants_grad, 'backward')
GRAD_FN = _params(lambda op, s: _wants_grad(op, s) and s.check_grad_fn, 'grad_fn')
GRADCHECK = _params(lambda op, s: _wants_grad(op, s) and s.gradcheck
                    and 0 < s.numel <= GRADCHECK_MAX_NUMEL, 'gradcheck')
# (empty tensors are left out: see test_gradgradcheck_empty_input)
GRADGRADCHECK = _params(lambda op, s: _wants_grad(op, s) and s.gradcheck and not s.has_empty
                        and op.twice_differentiable and s.numel <= GRADGRADCHECK_MAX_NUMEL,
                        'gradgradcheck')
INPLACE = _params(lambda op, s: op.inplace and s.args and is_tensor_arg(s.args[0]), 'inplace')
ERRORS = [pytest.param(op, e, i, id=f'{op.name}-{i}-{e.desc}', marks=(
              pytest.mark.xfail(strict=True, reason=e.xfail) if e.xfail else ()))
          for op in OPS for i, e in enumerate(op.get_errors())
          if e.variant == 'fn' or getattr(op, e.variant) is not None]
INPLACE_OPS = [pytest.param(op, id=op.name, marks=(
                   pytest.mark.xfail(strict=True, reason=op.inplace_xfail)
                   if op.inplace_xfail else ()))
               for op in OPS if op.inplace]


def _record(op, i, kind='sample'):
    STATS['ops'].add(op.name)
    STATS['samples'].add((op.name, kind, i))


# -- the checks -----------------------------------------------------------------------------

@pytest.mark.parametrize('op,sample,i', ALL)
def test_forward(op, sample, i):
    _record(op, i)
    for name, call in variants(op, sample):
        d_args, d_kw, _, _ = build(dynagrad, sample)
        t_args, t_kw, _, _ = build(torch, sample)
        expected, t_warned = _warnings_of(call, torch, t_args, t_kw)
        actual, d_warned = _warnings_of(call, dynagrad, d_args, d_kw)
        assert_same_outputs(actual, expected, what=f'{name} form')
        assert d_warned == t_warned, f'{name} form: dynagrad warned {d_warned or "nothing"}, ' \
                                     f'torch {t_warned or "nothing"}'


# torch gives these once per process (TORCH_WARN_ONCE), so whether it warns in a given test
# depends on what ran before; dynagrad warns each time and Python's filters show it once.
TORCH_WARNS_ONCE = ("Using padding='same' with even kernel lengths",
                    'The reduce argument of ', 'torch.triangular_solve is deprecated',
                    'torch.qr is deprecated', 'torch.cholesky is deprecated',
                    'at::nuclear_norm is deprecated', 'torch.lu is deprecated',
                    'The length of signal is shorter than the length parameter')


def _warnings_of(call, lib, args, kwargs):
    """The call's result, and the categories of the warnings it gave (x.T's aside)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        out = call(lib, *args, **kwargs)
    ignored = ('The use of `x.T`',) + TORCH_WARNS_ONCE
    return out, {w.category.__name__ for w in caught
                 if not any(text in str(w.message) for text in ignored)}


@pytest.mark.parametrize('op,sample,i', GRAD)
def test_backward(op, sample, i):
    d_args, d_kw, d_leaves, _ = build(dynagrad, sample)
    t_args, t_kw, t_leaves, _ = build(torch, sample)
    t_outs = differentiable_outputs(primary(op, sample)(torch, *t_args, **t_kw))
    d_outs = differentiable_outputs(primary(op, sample)(dynagrad, *d_args, **d_kw))
    assert len(d_outs) == len(t_outs), 'number of outputs requiring grad'
    if not t_outs:
        return
    pairs = [upstream(t, op.name, i, k) for k, t in enumerate(t_outs)]
    torch.autograd.backward(t_outs, [gt for _, gt in pairs])
    dynagrad.autograd.backward(d_outs, [gd for gd, _ in pairs])
    assert_grads(d_leaves, t_leaves, sample)


@pytest.mark.parametrize('op,sample,i', GRAD_FN)
def test_grad_fn_name(op, sample, i):
    d_args, d_kw, _, _ = build(dynagrad, sample)
    t_args, t_kw, _, _ = build(torch, sample)
    t_outs = outputs(primary(op, sample)(torch, *t_args, **t_kw))
    d_outs = outputs(primary(op, sample)(dynagrad, *d_args, **d_kw))
    for d_out, t_out in zip(d_outs, t_outs):
        if t_out.grad_fn is None:
            assert d_out.grad_fn is None or d_out is d_args[0]
        else:
            assert node_name(d_out.grad_fn) == node_name(t_out.grad_fn)
            # programs dispatch on the node's type name too (torch: the C++ node's name)
            assert type(d_out.grad_fn).__name__ == type(t_out.grad_fn).__name__


def _func_of_leaves(op, sample):
    args, kwargs, leaves, _ = build(dynagrad, sample, float64=True)

    def f(*ls):
        a, k, _, _ = build(dynagrad, sample, leaves_in=ls)
        return primary(op, sample)(dynagrad, *a, **k)
    return f, leaves


@pytest.mark.parametrize('op,sample,i', GRADCHECK)
def test_gradcheck(op, sample, i):
    f, leaves = _func_of_leaves(op, sample)
    assert gradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize('op,sample,i', GRADGRADCHECK)
def test_gradgradcheck(op, sample, i):
    f, leaves = _func_of_leaves(op, sample)
    assert gradgradcheck(f, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- forward mode: the tangent of every differentiable op against torch's J v ---------------

FORWARD_AD = _params(lambda op, s: _wants_grad(op, s) and s.gradcheck
                     and 0 < s.numel <= GRADCHECK_MAX_NUMEL, 'forward_ad')


# where torch's own forward mode is wrong, so its J v is taken by central differences
TORCH_JVP_WRONG = {
    ('logcumsumexp', 'large_values'): 'torch drops the tangent of large entries',
    ('toplevel.native_layer_norm', 'f64_2dims'): 'torch gives mean and rstd zero tangents',
    ('toplevel.native_batch_norm', 'f64_no_stats'): 'torch gives the batch statistics zero '
                                                     'tangents',
    # (both checked against finite differences by hand: torch's tangent is off by 0.27 and
    # 0.45 where dynagrad's agrees to 1e-10)
    ('cholesky_inverse', 'lower'): "torch's jvp of cholesky_inverse is wrong",
    ('cholesky_inverse', 'upper_f64'): "torch's jvp of cholesky_inverse is wrong",
    ('triangular_solve', 'unit'): "torch's jvp ignores unitriangular",
}
EXACT, DIFFERENCES = dict(rtol=1e-7, atol=1e-9), dict(rtol=1e-5, atol=1e-6)


def _jvp_by_differences(f, primals, tangents, eps=1e-6):
    hi = f(*(p + eps * v for p, v in zip(primals, tangents)))
    lo = f(*(p - eps * v for p, v in zip(primals, tangents)))
    return tuple((h - l) / (2 * eps) for h, l in zip(hi, lo))


def _torch_jvp(op, sample, leaves, tangents):
    """torch's J v: its forward mode where it has it, else its reverse mode twice, else
    central differences (ops with neither, such as pdist); and the tolerance to use."""
    floats = [k for k, t in enumerate(leaves) if t.dtype.is_floating_point]

    def f(*float_leaves):
        ls = list(leaves)
        for k, t in zip(floats, float_leaves):
            ls[k] = t
        a, kw, _, _ = build(torch, sample, leaves_in=ls)
        return _float_outputs(primary(op, sample)(torch, *a, **kw))
    primals = tuple(leaves[k] for k in floats)
    if (op.name, sample.desc) not in TORCH_JVP_WRONG:
        for transform in (torch.func.jvp, torch.autograd.functional.jvp):
            try:
                return transform(f, primals, tuple(tangents))[1], EXACT
            except (NotImplementedError, RuntimeError):
                pass
    return _jvp_by_differences(f, primals, tangents), DIFFERENCES


def _float_outputs(result):
    return tuple(o for o in outputs(result) if o.dtype.is_floating_point)


@pytest.mark.parametrize('op,sample,i', FORWARD_AD)
def test_forward_ad(op, sample, i):
    fw = dynagrad.autograd.forward_ad
    _, _, d_leaves, _ = build(dynagrad, sample, float64=True)
    _, _, t_leaves, _ = build(torch, sample, float64=True)
    rng = rng_for(op.name, i, 'tangent')
    vs = [rng.standard_normal(tuple(t.shape)) if t.dtype.is_floating_point else None
          for t in t_leaves]
    with fw.dual_level():
        duals = [d if v is None else fw.make_dual(d.detach(), dynagrad.tensor(v))
                 for d, v in zip(d_leaves, vs)]
        a, k, _, _ = build(dynagrad, sample, leaves_in=duals)
        outs = _float_outputs(primary(op, sample)(dynagrad, *a, **k))
        d_tangents = [fw.unpack_dual(o).tangent for o in outs]
    if not outs:    # no float result (an integer view, a copy into an integer tensor)
        return
    try:
        t_tangents, tol = _torch_jvp(op, sample, [t.detach() for t in t_leaves],
                                     [torch.from_numpy(v) for v in vs if v is not None])
    except RuntimeError:
        # torch refuses the float64 form of the sample (a float32 keyword tensor beside
        # float64 leaves): central differences of dynagrad's own float64 op instead
        def f(*ls):
            a, kw, _, _ = build(dynagrad, sample, leaves_in=ls)
            return tuple(o.numpy() for o in _float_outputs(primary(op, sample)(
                dynagrad, *a, **kw)))
        primals = [d.detach() for d in d_leaves]
        steps = [dynagrad.tensor(v) if v is not None else None for v in vs]
        hi = f(*(p if v is None else p + 1e-6 * v for p, v in zip(primals, steps)))
        lo = f(*(p if v is None else p - 1e-6 * v for p, v in zip(primals, steps)))
        t_tangents = [torch.from_numpy((h - l) / 2e-6) for h, l in zip(hi, lo)]
        tol = DIFFERENCES
    assert len(d_tangents) == len(t_tangents), 'number of differentiable outputs'
    for k, (d, t) in enumerate(zip(d_tangents, t_tangents)):
        expected = np.zeros(tuple(t.shape)) if t._is_zerotensor() else t.detach().numpy()
        if d is None:   # no tangent: only right where the derivative is zero
            assert not expected.any(), f'output {k}: no tangent, torch has {expected}'
            continue
        np.testing.assert_allclose(d.detach().numpy(), expected, **tol,
                                   err_msg=f'tangent of output {k}')


def _inplace_runner(op, sample, i, use_operator=False):
    def run(lib):
        args, kwargs, leaves, base = build(lib, sample, clone_first=True)
        target = args[0]
        if use_operator:
            result = op.inplace_operator(target, *args[1:])
        else:
            result = getattr(target, op.inplace)(*args[1:], **kwargs)
        assert result is target, 'an in-place op returns its target'
        grads = None
        if base.requires_grad:
            g = rng_for(op.name, i, 'inplace').standard_normal(tuple(base.shape))
            g = np.asarray(g, dtype=dtype_name(base))
            names = (node_name(target.grad_fn), node_name(base.grad_fn))
            base.backward(_tensor(lib, g))
            grads = names
        return target, base, leaves, grads
    return run


@pytest.mark.parametrize('op,sample,i', INPLACE)
def test_inplace(op, sample, i):
    _record(op, i)
    forms = [False] + ([True] if op.inplace_operator and not sample.kwargs else [])
    for use_operator in forms:
        d, t = same_exception(_inplace_runner(op, sample, i, use_operator))
        if t is None:
            continue
        (d_target, d_base, d_leaves, d_names), (t_target, t_base, t_leaves, t_names) = d, t
        assert_same(d_target, t_target, what='target')
        assert_same(d_base, t_base, what='base')
        if isinstance(sample.args[0], NC) and t_names is not None:
            # torch regenerates a view's history as AsStridedBackward0; dynagrad replays the
            # view ops. Only the base's CopySlices is compared.
            d_names, t_names = d_names[1:], t_names[1:]
        assert d_names == t_names, 'grad_fn names of target and base'
        assert_grads(d_leaves, t_leaves, sample)


def _first_inplace_sample(op):
    """A sample whose in-place form succeeds in torch on a float tensor (no views)."""
    for i, s in enumerate(op.get_samples()):
        if not (s.args and isinstance(s.args[0], np.ndarray) and s.args[0].dtype.kind == 'f'
                and s.args[0].size):
            continue
        try:
            args, kw, _, _ = build(torch, s, requires_grad=False, clone_first=True)
            getattr(args[0], op.inplace)(*args[1:], **kw)
        except Exception:  # noqa: BLE001
            continue
        return s
    raise AssertionError(f'{op.name}: no sample works in place')


# Scenarios: (id, make(y) -> (z, victim), raises). ``victim`` (y, a view of y, or z) is
# modified in place before ``z.sum().backward()``; torch raises exactly when a tensor
# saved for backward was modified.
SCENARIOS = [
    ('input_saved_by_mul', lambda y: (y * y, y), True),
    ('output_saved_by_exp', lambda y: (y.exp(),) * 2, True),
    ('nothing_saved_by_add', lambda y: (y + 1, y), False),
    ('view_of_saved_input', lambda y: (y * y, y.view(tuple(y.shape))), True),
]


@pytest.mark.parametrize('scenario', SCENARIOS, ids=[s[0] for s in SCENARIOS])
@pytest.mark.parametrize('op', INPLACE_OPS)
def test_inplace_version_check(op, scenario):
    _, make, raises = scenario
    sample = _first_inplace_sample(op)

    def run(lib):
        args, kw, _, _ = build(lib, sample, requires_grad=True)
        z, victim = make(args[0].clone())
        getattr(victim, op.inplace)(*args[1:], **kw)
        z.sum().backward()

    try:
        run(torch)
    except RuntimeError as e:
        assert raises, f'torch raised unexpectedly: {e}'
        assert 'modified by an inplace operation' in str(e)
        with pytest.raises(RuntimeError, match='modified by an inplace operation'):
            run(dynagrad)
    else:
        assert not raises, 'torch did not raise'
        run(dynagrad)


@pytest.mark.parametrize('op', [pytest.param(op, id=op.name) for op in OPS if op.inplace])
def test_inplace_on_leaf_raises(op):
    sample = _first_inplace_sample(op)
    for lib in LIBS:
        args, kw, _, _ = build(lib, sample, requires_grad=True)
        with pytest.raises(RuntimeError, match='leaf Variable that requires grad'):
            getattr(args[0], op.inplace)(*args[1:], **kw)


@pytest.mark.parametrize('op,err,i', ERRORS)
def test_error(op, err, i):
    _record(op, i, 'error')

    def run(lib):
        args, kw, _, _ = build(lib, err, requires_grad=False, clone_first=err.variant == 'inplace')
        if err.variant == 'fn':
            return op.call(lib, *args, **kw)
        name = op.inplace if err.variant == 'inplace' else (op.method or op.name)
        return getattr(args[0], name)(*args[1:], **kw)

    with pytest.raises(err.exc) as t_info:
        run(torch)
    with pytest.raises(err.exc) as d_info:
        run(dynagrad)
    for base in (IndexError, TypeError, ValueError):
        assert isinstance(d_info.value, base) == isinstance(t_info.value, base), (
            f'torch raised {type(t_info.value).__name__}, dynagrad {type(d_info.value).__name__}')


# -- regressions: bugs found by this suite in the mechanism, fixed there -------------------

def test_broadcast_error_is_runtime_error():
    with pytest.raises(RuntimeError, match=r'The size of tensor a \(3\) must match the size of '
                                           r'tensor b \(4\) at non-singleton dimension 1 '
                                           r'\(add: shapes \[2, 3\] and \[4\]\)'):
        dynagrad.ones(2, 3) + dynagrad.ones(4)


def test_fill_and_zero_node_names():
    x = dynagrad.ones(3, requires_grad=True)
    assert x.clone().fill_(2.0).grad_fn.name() == 'FillBackward2'
    assert x.clone().zero_().grad_fn.name() == 'ZeroBackward0'


def test_inplace_into_int_target_records_no_graph():
    y = dynagrad.zeros(3, dtype=dynagrad.int64)
    y.copy_(dynagrad.ones(3, requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None


def test_pow_inplace_tensor_exponent():
    x = dynagrad.tensor([1.5, 2.0], requires_grad=True)
    e = dynagrad.tensor([2.0, 3.0], requires_grad=True)
    y = x.clone()
    y.pow_(e)
    y.sum().backward()
    assert y.grad_fn.name() == 'PowBackward1' and e.grad is not None


def test_double_backward_through_0dim_saved_output():
    x = dynagrad.tensor(0.5, dtype=dynagrad.float64, requires_grad=True)
    gx, = dynagrad.autograd.grad(x.exp(), [x], create_graph=True)
    ggx, = dynagrad.autograd.grad(gx, [x])
    assert abs(ggx.item() - np.exp(0.5)) < 1e-12


def test_gradgradcheck_empty_input():
    a = dynagrad.tensor(np.zeros((0, 3)), requires_grad=True)
    b = dynagrad.tensor(np.ones(3), requires_grad=True)
    assert gradgradcheck(lambda a, b: a * b, (a, b))


def test_copy_scalar_src():
    assert torch.zeros(2).copy_(1.5).tolist() == [1.5, 1.5]
    assert dynagrad.zeros(2).copy_(1.5).tolist() == [1.5, 1.5]


# -- the array door ---------------------------------------------------------------------------

class _CountingNamespace:
    """NumPy's API, counting the calls made through it (submodules are counted too)."""

    def __init__(self, module=np, counts=None):
        self._module = module
        self.counts = {} if counts is None else counts

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, type(np)):
            return _CountingNamespace(value, self.counts)
        if isinstance(value, np.ufunc):
            return _CountedUfunc(name, value, self.counts)
        if callable(value) and not isinstance(value, type):
            counts = self.counts

            def counted(*args, **kwargs):
                counts[name] = counts.get(name, 0) + 1
                return value(*args, **kwargs)
            return counted
        return value


class _CountedUfunc:
    """A ufunc whose calls and methods (``add.at``, ``maximum.reduceat``...) are counted."""

    def __init__(self, name, ufunc, counts):
        self._name, self._ufunc, self._counts = name, ufunc, counts

    def __call__(self, *args, **kwargs):
        self._counts[self._name] = self._counts.get(self._name, 0) + 1
        return self._ufunc(*args, **kwargs)

    def __getattr__(self, attr):
        value = getattr(self._ufunc, attr)
        if not callable(value):
            return value

        def counted(*args, **kwargs):
            key = f'{self._name}.{attr}'
            self._counts[key] = self._counts.get(key, 0) + 1
            return value(*args, **kwargs)
        return counted


DOOR_COUNTS = {}


@pytest.mark.parametrize('op', [pytest.param(op, id=op.name) for op in OPS])
def test_through_counting_namespace(op):
    """Every row's forward and backward again, with dynagrad.backend.xp pointed at a
    namespace that counts its calls and forwards to NumPy: the values and gradients still
    match torch, so the door reaches every op (tests/test_array_door.py checks no op goes
    around it)."""
    from dynagrad.backend import array_namespace
    counting = _CountingNamespace(counts=DOOR_COUNTS)
    with array_namespace(counting):
        for i, sample in enumerate(op.get_samples()):
            if sample.xfail:
                continue
            test_forward(op, sample, i)
            if _wants_grad(op, sample):
                test_backward(op, sample, i)


def test_counting_namespace_saw_the_ops_compute():
    if not DOOR_COUNTS:
        pytest.skip('runs after test_through_counting_namespace')
    assert sum(DOOR_COUNTS.values()) > 10_000
    assert {'exp', 'matmul', 'zeros', 'where'} <= set(DOOR_COUNTS)


# -- vmap -----------------------------------------------------------------------------------
# Every sample run under vmap on a batch of three versions of its inputs (float inputs
# scaled toward zero, which keeps every op's domain; integer and boolean ones repeated),
# against torch's op applied to each version separately: values, and the gradients of the
# batched inputs through the one batched graph. Where torch's own vmap refuses a sample
# (data-dependent shapes, .item(), random draws in 'error' mode), dynagrad must refuse too
# or compute it right.

VMAP_BATCH = 3
# Known gaps of dynagrad's vmap (strict xfails, README "Not yet"): (op name, sample index)
# -> reason.
VMAP_KNOWN = {
    ('prod', 5): 'a zero-dim sample reduced over all dims',
    ('std', 23): 'constant rows: the batched gradient differs where the std is zero',
    ('std_mean', 23): 'constant rows: the batched gradient differs where the std is zero',
    ('addr', 4): 'beta=0 under vmap: the ignored input gets None, not a zero gradient',
    ('addmm', 3): 'beta=0 under vmap: the ignored input gets None, not a zero gradient',
    ('linalg.qr', 6): "mode='r' of an empty matrix: the empty Q is not batched",
    ('cat', 6): 'all operands empty',
    ('cat', 7): 'all operands empty',
    ('concat', 6): 'all operands empty',
    ('concat', 7): 'all operands empty',
    ('concatenate', 6): 'all operands empty',
    ('concatenate', 7): 'all operands empty',
    ('Tensor.unfold', 5): 'a zero-dim sample',
    ('as_strided', 0): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 1): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 2): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 3): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 4): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 5): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 6): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 7): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided', 8): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 0): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 1): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 2): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 3): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 4): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 5): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 6): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 7): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('as_strided_copy', 8): 'as_strided is refused under vmap (storage offsets are not batched)',
    ('conv1d', 10): 'an empty batch of images',
    ('conv2d', 11): 'an empty batch of images',
    ('conv_transpose1d', 5): 'an empty batch of images',
    ('toplevel.embedding_bag', 0): 'embedding_bag reads offsets per call',
    ('toplevel.embedding_bag', 1): 'embedding_bag reads offsets per call',
    ('toplevel.embedding_bag', 2): 'embedding_bag reads offsets per call',
    ('toplevel.embedding_bag', 3): 'embedding_bag reads offsets per call',
    ('toplevel.embedding_bag', 4): 'embedding_bag reads offsets per call',
    ('nn.functional.cross_entropy', 22): 'class-probability target not batched beside a batched input',
}


def _vmap_params():
    out = []
    for p in _params(lambda op, s: bool(s.args) and any(is_tensor_arg(a) for a in s.args)
                     and not s.method_only, 'vmap'):
        op, s, i = p.values
        reason = VMAP_KNOWN.get((op.name, i))
        marks = list(p.marks)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(op, s, i, id=p.id, marks=marks))
    return out


VMAP = _vmap_params()
VMAP_FALLBACK = {}   # op name -> op classes that ran through the per-sample loop


def _versions(leaf_arrays):
    out = []
    for j in range(VMAP_BATCH):
        out.append([np.asarray(a * a.dtype.type(1 - 0.15 * j)) if a.dtype.kind == "f" else a.copy()
                    for a in leaf_arrays])
    return out


@pytest.mark.parametrize('op,sample,i', VMAP)
def test_vmap(op, sample, i):
    from dynagrad.func import _batch_rules
    _record(op, i, 'vmap')
    _, _, t_base, _ = build(torch, sample, requires_grad=False)
    arrays = [t.numpy() for t in t_base]
    versions = _versions(arrays)
    call = primary(op, sample)

    def on(lib, leaves):
        a, k, _, _ = build(lib, sample, leaves_in=leaves)
        return call(lib, *a, **k)

    expected = []
    try:
        for vs in versions:
            expected.append(on(torch, [torch.from_numpy(v.copy()) for v in vs]))
    except Exception:   # noqa: BLE001 - a version torch refuses: the sample has no batch
        pytest.skip('torch refuses a scaled version of this sample')
    results = expected[0]
    if not all(isinstance(o, torch.Tensor) for o in outputs(results)):
        return      # not a tensor function (size, is_floating_point): nothing to vectorise
    wants_grad = _wants_grad(op, sample)
    stacked = [dynagrad.tensor(np.stack([vs[m] for vs in versions]))
               for m in range(len(arrays))]
    for s, a in zip(stacked, arrays):
        if wants_grad and a.dtype.kind == 'f':
            s.requires_grad_()
    before = set(_batch_rules._warned)
    try:
        actual = dynagrad.func.vmap(lambda *ls: on(dynagrad, list(ls)))(*stacked)
    except RuntimeError as e:
        t_stacked = [torch.from_numpy(np.stack([vs[m] for vs in versions]))
                     for m in range(len(arrays))]
        try:
            torch.func.vmap(lambda *ls: on(torch, list(ls)))(*t_stacked)
        except Exception:   # noqa: BLE001 - torch's vmap refuses it too
            return
        raise AssertionError(f'dynagrad vmap raised where torch vmap works: {e}') from e
    fell_back = set(_batch_rules._warned) - before
    if fell_back:
        VMAP_FALLBACK.setdefault(op.name, set()).update(fell_back)
    a_outs = outputs(actual)
    e_outs = [torch.stack(list(group)) for group in zip(*[outputs(r) for r in expected])]
    assert len(a_outs) == len(e_outs), 'number of outputs'
    for k, (x, y) in enumerate(zip(a_outs, e_outs)):
        assert_same(x, y, what=f'vmapped output {k}')
    if not wants_grad:
        return
    diff = [(k, o) for k, o in enumerate(a_outs) if o.requires_grad]
    if not diff:
        return
    gs = [upstream(o, op.name, i, 'vmap', k) for k, o in diff]
    dynagrad.autograd.backward([o for _, o in diff], [g[0] for g in gs])
    for j, vs in enumerate(versions):
        leaves = [torch.from_numpy(v.copy()).requires_grad_(v.dtype.kind == 'f') for v in vs]
        outs = outputs(on(torch, leaves))
        pairs = [(outs[k], g[1][j]) for (k, _), g in zip(diff, gs) if outs[k].requires_grad]
        if not pairs:
            continue
        got = torch.autograd.grad([p[0] for p in pairs], [x for x in leaves if x.requires_grad],
                                  [p[1] for p in pairs], allow_unused=True)
        got = iter(got)
        for m, x in enumerate(leaves):
            if not x.requires_grad:
                continue
            g = next(got)
            d = stacked[m].grad
            tol = GRAD_TOL if sample.all_float64 else {k: GRAD_TOL['float32'] for k in GRAD_TOL}
            if g is None or (d is None and g.numel() == 0):
                assert d is None or not np.any(d.numpy()[j]), f'grad of input {m}, sample {j}'
                continue
            assert d is not None, f'grad of input {m} is None; torch has one'
            assert_same(d[j], g, tol, f'grad of input {m}, sample {j}')
