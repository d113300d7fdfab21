"""dynagrad.compile's native code generation (compiler/native_codegen.py): runs of
elementwise ops become one numba kernel forward and one backward. Compiled results are
checked against eager dynagrad and against torch, with the native generator on and with the
NumPy generator (``set_kernels('numpy')``); the native one must really have run (the
program names its regions). Without tanh the kernels do NumPy's IEEE operations in the same
order, so values and gradients equal eager's bit for bit; tanh's float32 rational fit is
within a few ulps (tolerances below).
"""
import contextlib

import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad import backend, native

NUMBA_MISSING = native.available()
needs_numba = pytest.mark.skipif(NUMBA_MISSING is not None,
                                 reason=f'numba does not load: {NUMBA_MISSING}')
MODES = ['numpy', pytest.param('native', marks=needs_numba)]
DTYPES = [np.float32, np.float64]
# tanh: float32's rational fit against NumPy's SIMD tanh, float64's libm against NumPy's;
# gradients through a chain with cancellations differ in absolute terms, against the
# array's largest value: within 16 eps of it (float32 measured 2 eps from float64 truth,
# as eager's and torch's are)
TOL = {np.float32: dict(rtol=2e-6, atol=1e-6), np.float64: dict(rtol=1e-13, atol=1e-14)}


def close(a, b, dtype):
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(a, b, rtol=0, atol=16 * eps * np.abs(b).max() + eps)


def close_to_all(result, *references, dtype):
    """A (value, gradients) pair close to each reference pair, value by value."""
    value, grads = result
    for ref_value, ref_grads in references:
        for got, want in zip([value] + list(grads), [ref_value] + list(ref_grads),
                             strict=True):
            close(got, want, dtype)


@contextlib.contextmanager
def kernels(mode):
    previous = backend.set_kernels(mode)
    try:
        yield
    finally:
        backend.set_kernels(previous)


def programs(compiled):
    compiled = compiled.__dict__.get('_compiled', compiled)
    return compiled.programs()


def region_count(compiled):
    return sum(len(p.regions) for p in programs(compiled))


def chain(x, w, b):
    """Every op the native generator fuses, with scalars on both sides."""
    h = x * 1.0001 + 0.5
    h = (h * w).tanh() - b
    h = -h * 2 + h * h
    h = (0.25 - h).relu() * w
    return (h + x).tanh() * 3


def chain_no_tanh(x, w, b):
    h = x * 1.5 - w * 0.75
    h = -(h * w) + b * 2
    h = (h * h - 0.5).relu() * b
    h = h / (w * w + 1.0) - 2.0 / (b * b + 0.5) + h / 3.0
    return h - x


def run(fn, arrays, requires, mode, dtype, calls=3):
    """``fn`` compiled, called ``calls`` times: (value, gradients, compiled)."""
    with kernels(mode):
        compiled = dg.compile(fn)
        for _ in range(calls):
            tensors = [dg.tensor(a.astype(dtype), requires_grad=r)
                       for a, r in zip(arrays, requires)]
            out = compiled(*tensors)
            out.sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in tensors]
    return out.detach().numpy(), grads, compiled


def eager(fn, arrays, requires, dtype):
    tensors = [dg.tensor(a.astype(dtype), requires_grad=r) for a, r in zip(arrays, requires)]
    out = fn(*tensors)
    out.sum().backward()
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in tensors]


def with_torch(fn, arrays, requires, dtype):
    tensors = [torch.tensor(a.astype(dtype), requires_grad=r)
               for a, r in zip(arrays, requires)]
    out = fn(*tensors)
    out.sum().backward()
    return out.detach().numpy(), [None if t.grad is None else t.grad.numpy() for t in tensors]


def inputs(shape=(5, 7), n=3, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(n)]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
def test_chain_values_and_gradients_match_eager_and_torch(mode, dtype):
    arrays, requires = inputs(), (True, True, True)
    value, grads, compiled = run(chain, arrays, requires, mode, dtype)
    ref_value, ref_grads = eager(chain, arrays, requires, dtype)
    torch_value, torch_grads = with_torch(chain, arrays, requires, dtype)
    truth_value, truth_grads = eager(chain, arrays, requires, np.float64)
    assert value.dtype == dtype and all(g.dtype == dtype for g in grads)
    close_to_all((value, grads), (ref_value, ref_grads), (torch_value, torch_grads),
                 (truth_value, truth_grads), dtype=dtype)
    (program,) = programs(compiled)
    if mode == 'native':
        assert region_count(compiled) == 1
        assert 'fused region 0' in program.code() and 'R0f(' in program.code()
        assert 'R0b(' in program.code()
    else:
        assert region_count(compiled) == 0 and 'fused region' not in program.code()


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
def test_without_tanh_the_kernels_give_eager_bits(mode, dtype):
    arrays, requires = inputs(seed=1), (True, True, True)
    value, grads, compiled = run(chain_no_tanh, arrays, requires, mode, dtype)
    ref_value, ref_grads = eager(chain_no_tanh, arrays, requires, dtype)
    np.testing.assert_array_equal(value, ref_value)
    for g, ref in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, ref)
    assert region_count(compiled) == (1 if mode == 'native' else 0)


@needs_numba
def test_the_region_source_is_one_loop_forward_and_backward():
    _, _, compiled = run(chain, inputs(), (True, True, True), 'native', np.float32)
    (region,) = programs(compiled)[0].regions
    assert len(region.steps) >= 15
    assert region.source.count('for i in range(') == 2          # one pass each way
    assert 'def forward(' in region.source and 'def backward(' in region.source
    assert '_F = np.float32' in region.source     # constants in the data's dtype


@needs_numba
def test_relu_keeps_nan_and_signed_zeros_as_eager():
    x = np.array([np.nan, -0.0, 0.0, -1.0, 2.0, np.inf, -np.inf], np.float32)

    def f(a):
        return (a * 1.0).relu() * 1.0
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            out = compiled(dg.tensor(x)).numpy()
    assert region_count(compiled) == 1
    expected = f(dg.tensor(x)).numpy()
    np.testing.assert_array_equal(out, expected)
    assert np.signbit(out).tolist() == np.signbit(expected).tolist()


@pytest.mark.parametrize('mode', MODES)
def test_gradients_only_for_inputs_that_need_them(mode):
    arrays, requires = inputs(seed=2), (False, True, False)
    value, grads, compiled = run(chain, arrays, requires, mode, np.float64)
    ref_value, ref_grads = eager(chain, arrays, requires, np.float64)
    np.testing.assert_allclose(value, ref_value, **TOL[np.float64])
    assert grads[0] is None and grads[2] is None
    np.testing.assert_allclose(grads[1], ref_grads[1], **TOL[np.float64])


@pytest.mark.parametrize('mode', MODES)
def test_intermediates_read_outside_the_region_are_written_out(mode):
    """An intermediate of the chain returned, and one read by a matrix product: both are
    written by the forward kernel, and their gradients enter the backward kernel."""
    def f(x, w, m):
        h = x * 2.0 - w
        u = (h * h).tanh()          # read by the matmul below and returned
        v = u * w + 1.0
        return v * 0.5, (u @ m).sum() + h.sum()

    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((4, 6)), rng.standard_normal((4, 6)),
              rng.standard_normal((6, 2))]
    tensors_of = lambda lib: [lib.tensor(a, requires_grad=True) for a in arrays]  # noqa: E731

    def loss(fn, ts):
        a, b = fn(*ts)
        (a.sum() + b).backward()
        return a.detach().numpy(), b.detach().numpy(), [t.grad.numpy() for t in ts]

    with kernels(mode):
        compiled = dg.compile(f)
        for _ in range(3):
            got = loss(compiled, tensors_of(dg))
    ref = loss(f, tensors_of(dg))
    theirs = loss(f, tensors_of(torch))
    for g, r, t in zip(got[:2] + tuple(got[2]), ref[:2] + tuple(ref[2]),
                       theirs[:2] + tuple(theirs[2])):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)
    if mode == 'native':
        regions = programs(compiled)[0].regions
        assert sum(len(r.exports) for r in regions) >= 2


@pytest.mark.parametrize('mode', MODES)
def test_a_module_with_parameters(mode):
    class Gate(dg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = dg.nn.Parameter(dg.randn(8, 3))
            self.b = dg.nn.Parameter(dg.randn(8, 3))

        def forward(self, x):
            return ((x * self.w + self.b).tanh() * self.w - x).relu()

    dg.manual_seed(0)
    model = Gate()
    x = dg.randn(8, 3)
    with kernels(mode):
        compiled = dg.compile(model)
        for _ in range(3):
            model.zero_grad()
            out = compiled(x)
            out.sum().backward()
    got = out.detach().numpy(), [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    out = model(x)
    out.sum().backward()
    np.testing.assert_allclose(got[0], out.detach().numpy(), **TOL[np.float32])
    for g, p in zip(got[1], model.parameters()):
        np.testing.assert_allclose(g, p.grad.numpy(), **TOL[np.float32])
    assert region_count(compiled) == (1 if mode == 'native' else 0)


@needs_numba
def test_no_grad_calls_run_the_forward_kernel_only():
    arrays = inputs(seed=4)
    with kernels('native'):
        compiled = dg.compile(chain_no_tanh)
        with dg.no_grad():
            for _ in range(3):
                out = compiled(*[dg.tensor(a) for a in arrays])
    assert region_count(compiled) == 1
    np.testing.assert_array_equal(out.numpy(),
                                  chain_no_tanh(*[dg.tensor(a) for a in arrays]).numpy())


@needs_numba
def test_non_contiguous_inputs():
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((7, 5)).T, rng.standard_normal((5, 7)),
              rng.standard_normal((7, 5))[:, ::-1].T.copy()]

    def f(x, w, b):
        return chain_no_tanh(x, w, b)
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            ts = [dg.tensor(a, requires_grad=True) for a in arrays]
            ts = [ts[0].t().t()] + ts[1:]
            out = compiled(*ts)
            out.sum().backward()
    assert region_count(compiled) == 1
    es = [dg.tensor(a, requires_grad=True) for a in arrays]
    expected = f(*es)
    expected.sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    for t, e in zip(ts[1:], es[1:]):
        np.testing.assert_array_equal(t.grad.numpy(), e.grad.numpy())


@needs_numba
@pytest.mark.parametrize('dtype', [np.float16, np.int64])
def test_other_dtypes_keep_the_numpy_code(dtype):
    arrays = [np.arange(1, 13).reshape(3, 4) % 5 for _ in range(2)]

    def f(x, w):
        return (x * 2 + w) * w - x
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            out = compiled(*[dg.tensor(a.astype(dtype)) for a in arrays])
    assert region_count(compiled) == 0
    np.testing.assert_array_equal(out.numpy(),
                                  f(*[dg.tensor(a.astype(dtype)) for a in arrays]).numpy())


@needs_numba
def test_a_step_of_another_shape_ends_a_region_and_stays_correct():
    """A step whose output has another shape than the run's starts a new run; both runs
    are fused."""
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((6, 4)), rng.standard_normal((3, 6, 4))

    def f(x, y):
        h = (x * 2.0 + 1.0).tanh()      # a region: (6, 4)
        h = h * y                       # (3, 6, 4): another run starts
        return (h - 0.5) * h
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            ts = [dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)]
            out = compiled(*ts)
            out.sum().backward()
    assert region_count(compiled) == 2
    es = [dg.tensor(x, requires_grad=True), dg.tensor(y, requires_grad=True)]
    f(*es).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), f(*es).detach().numpy(),
                               **TOL[np.float64])
    for t, e in zip(ts, es):
        np.testing.assert_allclose(t.grad.numpy(), e.grad.numpy(), **TOL[np.float64])


def biased(x, bias, scale, rows, one):
    """Operands broadcast along trailing, leading and middle dimensions, and a (1,)."""
    h = x * scale + bias                # (6, 5, 4) with (5, 1) and (4,)
    h = (h * rows).tanh() - one         # rows (6, 1, 4): broadcast in the middle
    return (h * bias - scale).relu() + scale / (h * h + 1.0)


def biased_no_tanh(x, bias, scale, rows, one):
    h = x * scale + bias
    h = -(h * rows) * 2.0 + one
    return (h * bias - scale).relu() * h - rows / (h * h + 1.0)


BIASED_SHAPES = [(6, 5, 4), (4,), (5, 1), (6, 1, 4), (1,)]


def broadcast_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in BIASED_SHAPES]


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('summed', [False, True], ids=['values', 'summed'])
def test_broadcast_operands_values_and_gradients_match_eager_and_torch(mode, dtype, summed):
    """Bias-like operands join the region; their gradients are summed to their shapes in
    the kernel (in float64: within a sum's rounding of eager's and torch's)."""
    fn = (lambda *a: biased(*a).sum()) if summed else biased
    arrays, requires = broadcast_inputs(), (True,) * 5
    value, grads, compiled = run(fn, arrays, requires, mode, dtype)
    ref_value, ref_grads = eager(fn, arrays, requires, dtype)
    torch_value, torch_grads = with_torch(fn, arrays, requires, dtype)
    truth_value, truth_grads = eager(fn, arrays, requires, np.float64)
    assert value.dtype == dtype
    assert [g.shape for g in grads] == BIASED_SHAPES and all(g.dtype == dtype for g in grads)
    close_to_all((value, grads), (ref_value, ref_grads), (torch_value, torch_grads),
                 (truth_value, truth_grads), dtype=dtype)
    if mode == 'native':
        (region,) = programs(compiled)[0].regions
        assert region.extents == [6, 5, 4] and len(region.steps) >= 10
        assert (region.sum_step is not None) == summed
    else:
        assert region_count(compiled) == 0


@needs_numba
@pytest.mark.parametrize('dtype', DTYPES)
def test_broadcast_operands_give_eager_values_bit_for_bit(dtype):
    """Without tanh the forward is eager's IEEE operations, broadcast or not; the whole
    inputs' gradients too (only the summed ones are added in another order)."""
    arrays, requires = broadcast_inputs(seed=3), (True,) * 5
    value, grads, compiled = run(biased_no_tanh, arrays, requires, 'native', dtype)
    ref_value, ref_grads = eager(biased_no_tanh, arrays, requires, dtype)
    assert region_count(compiled) == 1
    np.testing.assert_array_equal(value, ref_value)
    np.testing.assert_array_equal(grads[0], ref_grads[0])
    for g, ref in zip(grads[1:], ref_grads[1:]):
        close(g, ref, dtype)


@needs_numba
def test_a_broadcast_region_loops_over_merged_dimensions():
    """Dimensions along which every input is whole, or every one broadcast, merge into one
    loop; a broadcast input is read at its own index, with no copy made."""
    rng = np.random.default_rng(4)
    x, bias = rng.standard_normal((3, 4, 5, 8)), rng.standard_normal(8)

    def f(x, bias):
        return (x + bias) * 2.0 - bias
    _, _, compiled = run(f, [x, bias], (True, True), 'native', np.float64)
    (region,) = programs(compiled)[0].regions
    assert region.extents == [60, 8] and region.levels == [(0, 1), (1,)]
    assert 'a1[q1]' in region.source and 's1[q1] += ' in region.source
    code = programs(compiled)[0].code()
    assert 'broadcast_to' not in code


@needs_numba
def test_a_mismatched_operand_is_not_fused():
    """An operand that does not broadcast to the output (the output broadcasts to it)
    keeps its step out of the run."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((4, 1)), rng.standard_normal((1, 3))

    def f(x, y):
        h = x * 2.0 + 1.0               # (4, 1): a region
        return h + y                    # (4, 3): one op, not fused
    value, grads, compiled = run(f, [x, y], (True, True), 'native', np.float64)
    ref_value, ref_grads = eager(f, [x, y], (True, True), np.float64)
    assert region_count(compiled) == 1
    (region,) = programs(compiled)[0].regions
    assert region.shape == (4, 1)
    np.testing.assert_array_equal(value, ref_value)
    for g, ref in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, ref)


def scores(q, bias):
    """Attention's scale-and-mask, as GPT writes it: a constant causal mask broadcast over
    batch and heads."""
    L = q.shape[-1]
    lib = torch if isinstance(q, torch.Tensor) else dg
    mask = lib.tril(lib.ones(L, L)).view(1, 1, L, L)
    large = q > 1.0
    att = (q + bias) * 0.125
    att = att.masked_fill(mask == 0, float('-inf'))
    return att.masked_fill(large, -3.0) * 2.0


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
def test_masked_fill_with_a_broadcast_mask(mode, dtype):
    rng = np.random.default_rng(8)
    arrays, requires = [rng.standard_normal((2, 3, 5, 5)), rng.standard_normal(5)], (True, True)
    value, grads, compiled = run(scores, arrays, requires, mode, dtype)
    ref_value, ref_grads = eager(scores, arrays, requires, dtype)
    torch_value, torch_grads = with_torch(scores, arrays, requires, dtype)
    np.testing.assert_array_equal(value, ref_value)
    np.testing.assert_array_equal(value, torch_value)
    hidden = np.triu(np.ones((5, 5), bool), 1) & ~(arrays[0].astype(dtype) > 1.0)
    assert (np.isneginf(value) == hidden).all() and hidden.sum() > 40
    np.testing.assert_array_equal(grads[0], ref_grads[0])
    close(grads[0], torch_grads[0], dtype)
    close(grads[1], ref_grads[1], dtype)
    close(grads[1], torch_grads[1], dtype)
    if mode == 'native':
        (region,) = programs(compiled)[0].regions
        assert len(region.steps) == 5 and "'bool'" not in region.source
        assert 'bool' in region.argument_types()['forward']
    else:
        assert region_count(compiled) == 0


def gelus(x, bias, approximate):
    F = (torch if isinstance(x, torch.Tensor) else dg).nn.functional
    h = F.gelu(x + bias, approximate=approximate)
    return F.gelu(h * 1.5 - 0.25, approximate=approximate) * h


@pytest.mark.parametrize('approximate', ['none', 'tanh'])
@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
def test_gelu_is_fused(mode, dtype, approximate):
    """GELU's fused formulas are the native GELU kernel's, operation for operation (both
    may fuse products and sums, not necessarily the same: an ulp apart); against NumPy's
    formulas, torch and float64 within a few ulps."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((7, 33)) * 3
    x[0, :5] = [0.0, -0.0, 40.0, -40.0, -7.5]
    arrays, requires = [x, rng.standard_normal(33)], (True, True)
    fn = lambda x, b: gelus(x, b, approximate)      # noqa: E731
    value, grads, compiled = run(fn, arrays, requires, mode, dtype)
    with kernels(mode):
        ref_value, ref_grads = eager(fn, arrays, requires, dtype)
    torch_value, torch_grads = with_torch(fn, arrays, requires, dtype)
    truth_value, truth_grads = eager(fn, arrays, requires, np.float64)
    if mode == 'native':
        (region,) = programs(compiled)[0].regions
        assert len(region.steps) == 6 and '_gelu' in region.source
    else:
        assert region_count(compiled) == 0
    close_to_all((value, grads), (ref_value, ref_grads), (torch_value, torch_grads),
                 (truth_value, truth_grads), dtype=dtype)


@needs_numba
def test_a_new_shape_gets_its_own_program_and_kernels():
    with kernels('native'):
        compiled = dg.compile(chain_no_tanh, dynamic=False)
        for shape in ((4,), (3, 5)):
            for _ in range(3):
                arrays = inputs(shape, seed=7)
                ts = [dg.tensor(a, requires_grad=True) for a in arrays]
                out = compiled(*ts)
                out.sum().backward()
            es = [dg.tensor(a, requires_grad=True) for a in arrays]
            chain_no_tanh(*es).sum().backward()
            np.testing.assert_array_equal(out.detach().numpy(),
                                          chain_no_tanh(*es).detach().numpy())
            for t, e in zip(ts, es):
                np.testing.assert_array_equal(t.grad.numpy(), e.grad.numpy())
    assert len(programs(compiled)) == 2 and region_count(compiled) == 2


@needs_numba
def test_an_input_written_in_place_later_is_not_recomputed_from():
    """The backward kernel recomputes from the region's inputs: where a later op of the
    program writes one of them in place, the region is not made (values stay right)."""
    def f(x, w):
        h = x * 2.0
        out = (h + 1.0) * 3.0 - w * 0.5
        h.mul_(5.0)
        return out * w + h

    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(6), rng.standard_normal(6)]
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            ts = [dg.tensor(a, requires_grad=True) for a in arrays]
            out = compiled(*ts)
            out.sum().backward()
    es = [dg.tensor(a, requires_grad=True) for a in arrays]
    f(*es).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), f(*es).detach().numpy())
    for t, e in zip(ts, es):
        np.testing.assert_array_equal(t.grad.numpy(), e.grad.numpy())
    for program in programs(compiled):
        written = {s.refs[0][1] for s in program.steps if s.inplace}
        for region in program.regions:
            assert not written & {v for kind, v in region.inputs if kind == 's'}


def test_numpy_kernels_switch_the_native_compiler_off():
    with kernels('numpy'):
        assert backend.native_compiler() is None
    if NUMBA_MISSING is None:
        with kernels('native'):
            assert backend.native_compiler() is not None


def test_without_numba_programs_keep_the_numpy_code(monkeypatch):
    """numba missing (or refusing this NumPy): the kernel switch says off, the generator
    writes NumPy code, results are eager's."""
    monkeypatch.setattr(native, 'available', lambda: 'ImportError: No module named numba')
    arrays, requires = inputs(seed=9), (True, True, True)
    value, grads, compiled = run(chain_no_tanh, arrays, requires, 'auto', np.float64)
    assert backend.native_compiler() is None
    assert region_count(compiled) == 0
    assert 'fused region' not in programs(compiled)[0].code()
    ref_value, ref_grads = eager(chain_no_tanh, arrays, requires, np.float64)
    np.testing.assert_array_equal(value, ref_value)
    for g, ref in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, ref)
    backend.set_kernels(backend.get_kernels())      # decide again without the patch


def test_a_program_without_a_region_does_not_import_numba():
    """Asked only where a region was found: compiling a matrix product costs no import."""
    import subprocess
    import sys
    code = ('import sys, dynagrad as dg\n'
            'c = dg.compile(lambda x: (x @ x).sum())\n'
            'x = dg.randn(3, 3, requires_grad=True)\n'
            'for _ in range(3): c(x).backward()\n'
            'print("numba" in sys.modules)\n')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == 'False'


@needs_numba
@pytest.mark.parametrize('dtype', DTYPES)
def test_a_sum_ending_the_run_is_summed_in_the_kernel(dtype):
    """The result is never stored: the forward kernel adds it up (in float64), the backward
    kernel reads its gradient as one number. Gradients keep eager's bits; the sum is
    another order of additions than NumPy's, so within rounding."""
    def f(x, w, b):
        return chain_no_tanh(x, w, b).sum()
    arrays = inputs((40, 30), seed=10)
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            ts = [dg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
            out = compiled(*ts)
            out.backward()
    (region,) = programs(compiled)[0].regions
    assert region.total is not None and 'and their sum' in programs(compiled)[0].code()
    es = [dg.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    expected = f(*es)
    expected.backward()
    assert out.shape == () and out.dtype == expected.dtype
    truth = f(*[dg.tensor(a) for a in arrays]).item()
    eps = np.finfo(dtype).eps
    # no worse than eager's own sum against the float64 value
    assert abs(out.item() - truth) <= max(abs(expected.item() - truth), 4 * eps * abs(truth))
    for t, e in zip(ts, es):
        np.testing.assert_array_equal(t.grad.numpy(), e.grad.numpy())
    with kernels('native'), dg.no_grad():
        np.testing.assert_allclose(compiled(*[dg.tensor(a.astype(dtype)) for a in arrays]).item(),
                                   expected.item(), rtol=8 * eps)


@needs_numba
def test_a_sum_over_dims_or_of_a_value_read_elsewhere_stays_an_op():
    def f(x, w):
        h = (x * w + 1.0) * w
        return h.sum(0), (x * 2.0 - w).sum() + (x * 2.0 - w)[0, 0] * 0
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((5, 6)), rng.standard_normal((5, 6))]
    with kernels('native'):
        compiled = dg.compile(f)
        for _ in range(3):
            ts = [dg.tensor(a, requires_grad=True) for a in arrays]
            a, b = compiled(*ts)
            (a.sum() + b).backward()
    assert all(r.total is None for r in programs(compiled)[0].regions)
    es = [dg.tensor(a, requires_grad=True) for a in arrays]
    ea, eb = f(*es)
    (ea.sum() + eb).backward()
    np.testing.assert_array_equal(a.detach().numpy(), ea.detach().numpy())
    np.testing.assert_array_equal(b.detach().numpy(), eb.detach().numpy())
    # x's gradient is two regions' sum: the kernel adds its own terms first, then the other
    # region's (the NumPy code adds them one by one): within rounding
    for t, e in zip(ts, es):
        close(t.grad.numpy(), e.grad.numpy(), np.float64)


@needs_numba
def test_a_kernel_numba_refuses_leaves_the_region_to_numpy(monkeypatch):
    from dynagrad.native import fused

    def refuse(source, kernels, dtype):
        raise RuntimeError('numba: typing failed')
    monkeypatch.setattr(fused, 'load_kernels', refuse)
    arrays, requires = inputs(seed=12), (True, True, True)
    value, grads, compiled = run(chain_no_tanh, arrays, requires, 'native', np.float64)
    assert region_count(compiled) == 0
    ref_value, ref_grads = eager(chain_no_tanh, arrays, requires, np.float64)
    np.testing.assert_array_equal(value, ref_value)
    for g, ref in zip(grads, ref_grads):
        np.testing.assert_array_equal(g, ref)


@needs_numba
def test_kernels_are_cached_on_disk_for_the_next_process(tmp_path):
    """The generated module is a file in DYNAGRAD_CACHE_DIR, so numba's cache=True keeps
    its machine code; a second process loads it (index and code files written once)."""
    import os
    import subprocess
    import sys
    code = ('import dynagrad as dg\n'
            'dg.manual_seed(0)\n'
            'c = dg.compile(lambda x, w: ((x * w + 1.0) * w - x).sum())\n'
            'x, w = dg.randn(8, requires_grad=True), dg.randn(8, requires_grad=True)\n'
            'for _ in range(3): c(x, w).backward()\n'
            'assert c.programs()[0].regions\n'
            'print(float(x.grad.sum()))\n')
    env = dict(os.environ, DYNAGRAD_CACHE_DIR=str(tmp_path), DYNAGRAD_KERNELS='native')
    first = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                           text=True, check=True)
    sources = list((tmp_path / 'fused').glob('dynagrad_fused_*.py'))
    assert len(sources) == 1
    cached = sorted(p.name for p in (tmp_path / 'fused' / '__pycache__').iterdir())
    assert any(n.endswith('.nbi') for n in cached) and any(n.endswith('.nbc') for n in cached)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / 'fused' / '__pycache__').iterdir()}
    second = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                            text=True, check=True)
    assert second.stdout == first.stdout
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps      # loaded, not rewritten


def block(x, ln_w, ln_b, qkv_w, qkv_b, w1, b1, w2, b2):
    """A GPT block as models write it: attention's scale and causal mask, the MLP's bias
    adds written out, GELU, a scaled residual."""
    lib = torch if isinstance(x, torch.Tensor) else dg
    F = lib.nn.functional
    B, L, C = x.shape
    q, k, v = F.linear(F.layer_norm(x, (C,), ln_w, ln_b), qkv_w, qkv_b).split(C, dim=2)
    q, k, v = (t.view(B, L, 2, C // 2).transpose(1, 2) for t in (q, k, v))
    mask = lib.tril(lib.ones(L, L)).view(1, 1, L, L)
    att = (q @ k.transpose(-2, -1)) * (1.0 / (C // 2) ** 0.5)
    att = att.masked_fill(mask == 0, float('-inf'))
    y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, L, C)
    x = x + y
    h = F.gelu(x @ w1 + b1)
    return x + (h @ w2 + b2) * 0.5


def block_inputs(seed=10, B=3, L=8, C=16):
    rng = np.random.default_rng(seed)
    shapes = [(B, L, C), (C,), (C,), (3 * C, C), (3 * C,), (C, 4 * C), (4 * C,),
              (4 * C, C), (C,)]
    arrays = [rng.standard_normal(s) * (1.0 if len(s) < 2 or s[0] == B else 0.2)
              for s in shapes]
    arrays[1] = arrays[1] * 0.1 + 1.0
    return arrays


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('mode', MODES)
def test_a_gpt_block_compiled_gets_eager_gradients(mode, dtype):
    """Regions in a real block: the attention's scaling and mask, the MLP's bias and GELU,
    its second bias, scaling and residual; values and every gradient as eager's (same
    kernels) and torch's (float64, within the matmuls' rounding)."""
    arrays = block_inputs()
    requires = (True,) * len(arrays)
    value, grads, compiled = run(block, arrays, requires, mode, dtype)
    with kernels(mode):
        ref_value, ref_grads = eager(block, arrays, requires, dtype)
    for got, ref in zip([value] + grads, [ref_value] + ref_grads):
        close(got, ref, dtype)
    if dtype == np.float64:
        torch_value, torch_grads = with_torch(block, arrays, requires, dtype)
        for got, theirs in zip([value] + grads, [torch_value] + torch_grads):
            close(got, theirs, dtype)
    if mode == 'native':
        regions = programs(compiled)[0].regions
        assert sorted(len(r.steps) for r in regions) == [2, 2, 3]
        assert all(r.extents is not None for r in regions)     # each broadcasts
    else:
        assert region_count(compiled) == 0


@needs_numba
def test_a_step_reading_the_run_or_writing_in_place_ends_it():
    """Only steps independent of the run run before its kernel: one reading a value the run
    made, or one writing in place, ends the run there."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))

    def reads(x, y):
        h = x * 2.0 + 1.0
        s = h.sum(dim=1, keepdim=True)      # reads h: ends the run
        return (h - 0.5) * s + y

    def writes(x, y):
        y = y * 1.0
        h = x * 2.0 + 1.0
        y.mul_(3.0)                         # in place: ends the run
        return (h - 0.5) * y
    for fn, count in ((reads, 2), (writes, 2)):
        value, grads, compiled = run(fn, [x, y], (True, True), 'native', np.float64)
        ref_value, ref_grads = eager(fn, [x, y], (True, True), np.float64)
        np.testing.assert_array_equal(value, ref_value)
        for g, ref in zip(grads, ref_grads):
            close(g, ref, np.float64)
        assert region_count(compiled) == count, fn.__name__
        for region in programs(compiled)[0].regions:
            assert region.steps == list(range(region.steps[0], region.steps[-1] + 1))


@needs_numba
@pytest.mark.parametrize('dtype', DTYPES)
def test_an_independent_step_between_runs_first(dtype):
    """A step reading nothing the run made (here one whose result the run then reads, and
    whose input gets its gradient through the region's) runs before the region's kernel,
    which is called at the run's end."""
    rng = np.random.default_rng(12)
    x, y = rng.standard_normal((5, 6)), rng.standard_normal(6)

    def f(x, y):
        h = x * 2.0 + 1.0
        z = y.exp()                         # not fused, independent of h
        h = (h - 0.5) * z
        return h * h
    value, grads, compiled = run(f, [x, y], (True, True), 'native', dtype)
    ref_value, ref_grads = eager(f, [x, y], (True, True), dtype)
    torch_value, torch_grads = with_torch(f, [x, y], (True, True), dtype)
    np.testing.assert_array_equal(value, ref_value)
    for g, ref, theirs in zip(grads, ref_grads, torch_grads):
        close(g, ref, dtype)
        close(g, theirs, dtype)
    (region,) = programs(compiled)[0].regions
    assert region.steps == [0, 1, 3, 4, 5]
    code = programs(compiled)[0].code()
    assert code.index('R0f(') > code.index('.forward(v1)')      # exp, then the kernel


@needs_numba
@pytest.mark.parametrize('shapes', [((4, 3), (), (4, 1)), ((0, 3), (3,), (0, 1)),
                                    ((2, 1, 3), (1,), (5, 1))],
                         ids=['0-d', 'empty', 'both-broadcast'])
def test_edge_shapes_of_broadcast_operands(shapes):
    """A 0-d operand, an empty region, and inputs that each broadcast (x (2,1,3) with a
    mask of (5,1): the output (2,5,3) is neither's shape): values and gradients as eager's."""
    rng = np.random.default_rng(13)
    x, y, m = (rng.standard_normal(s) for s in shapes)

    def f(x, y, m):
        h = x.masked_fill(m > 0.0, 0.5) * 2.0 + y
        return (h * y - x).relu()
    arrays, requires = [x, y, m], (True, True, False)
    value, grads, compiled = run(f, arrays, requires, 'native', np.float64)
    ref_value, ref_grads = eager(f, arrays, requires, np.float64)
    torch_value, torch_grads = with_torch(f, arrays, requires, np.float64)
    np.testing.assert_array_equal(value, ref_value)
    np.testing.assert_array_equal(value, torch_value)
    for g, ref, theirs in zip(grads[:2], ref_grads[:2], torch_grads[:2]):
        assert g.shape == ref.shape
        if g.size:
            close(g, ref, np.float64)
            close(g, theirs, np.float64)
    assert grads[2] is None
    assert region_count(compiled) == 1


@needs_numba
def test_a_step_reading_what_the_run_reads_ends_it():
    """A step between the members that reads one of the region's inputs is not run ahead:
    it could be that input's last use (freed there, or its buffer reused for the step's
    result) while the kernel, called at the run's end, still reads it."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((4, 5))

    def f(a):
        y = a.sin()
        h = y * 2.0 + 1.0
        z = y.exp()                         # y's last use
        return (h + z) * 0.5
    value, grads, compiled = run(f, [a], (True,), 'native', np.float64)
    ref_value, ref_grads = eager(f, [a], (True,), np.float64)
    np.testing.assert_array_equal(value, ref_value)
    close(grads[0], ref_grads[0], np.float64)
    regions = programs(compiled)[0].regions
    assert [len(r.steps) for r in regions] == [2, 2]
