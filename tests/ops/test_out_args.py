"""``out=`` arguments (``dynagrad/ops/out_args.py``) against torch.

The conformance column: every row of the op table whose function form torch runs with
``out=`` is called on both libraries with an ``out`` of the result's shape and dtype, an
empty one, one of another shape (resized, with torch's warning) and one of another dtype
(cast, or refused), comparing values, dtypes, shapes, warnings, error types, the identity
of what is returned and the version counter. Then targeted checks: the autograd refusal,
functions of several results, creation functions, aliasing.
"""
import warnings

import numpy as np
import pytest
import torch

import dynagrad
from op_db import OPS
from ops import test_conformance as conformance

RAN = {'rows': 0}     # samples whose out= forms torch runs: the column is not vacuous


def _rows():
    out = []
    for op in OPS:
        for i, s in enumerate(op.get_samples()):
            if s.method_only or s.xfail:
                continue
            out.append(pytest.param(op, s, i, id=f'{op.name}-{i}-{s.desc}'))
    return out


def _other_dtype(lib, t):
    """A dtype the result is not: float64 for floats (a cast torch allows or an exact-dtype
    op refuses), int32 for integers, float32 for bools and complex64 for complex."""
    name = conformance.dtype_name(t)
    other = {'float64': 'float32', 'bool': 'float32', 'complex64': 'complex128',
             'complex128': 'complex64', 'int64': 'int32'}.get(name)
    if other is None:
        other = 'float64' if t.dtype.is_floating_point else 'int64'
    return getattr(lib, other)


def _same_dtype(lib, r):
    return getattr(lib, conformance.dtype_name(r))


# How each variant makes out from torch's result on a library: (name, make(lib, result))
VARIANTS = [
    ('same', lambda lib, r: lib.zeros(tuple(r.shape), dtype=_same_dtype(lib, r))),
    ('empty', lambda lib, r: lib.empty(0, dtype=_same_dtype(lib, r))),
    ('resized', lambda lib, r: lib.zeros((7,), dtype=_same_dtype(lib, r))),
    ('dtype', lambda lib, r: lib.zeros(tuple(r.shape), dtype=_other_dtype(lib, r))),
]


def _run(op, sample, expected, make):
    """run(lib) for same_exception: the call with out made by ``make``; returns
    (result, outs, versions before, warning categories)."""
    def run(lib):
        args, kw, _, _ = conformance.build(lib, sample, requires_grad=False)
        outs = [make(lib, r) for r in conformance.outputs(expected)]
        out = outs[0] if not isinstance(expected, (tuple, list)) else tuple(outs)
        before = [o._version for o in outs]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            result = op.call(lib, *args, out=out, **kw)
        # the resize warning only: the forward column compares the op's own warnings
        warned = {w.category.__name__ for w in caught if 'was resized' in str(w.message)}
        return result, outs, before, warned
    return run


# Where dynagrad's out= differs from torch's, by op (and variant: None for all): the reason.
# A failure of a listed op is an expected one (xfail); any other fails.
NOT_GIVEN = 'dynagrad gives this form no out= yet'
F_FORMS = ('nn.functional forms take no out= yet: F.linear, F.gelu... run on nn.Module hot '
           'paths, where the wrapper would cost a frame')
OUT_KNOWN = {
    **{(name, None): F_FORMS for name in (
        'linear', 'nn.functional.avg_pool2d', 'nn.functional.avg_pool3d', 'nn.functional.gelu',
        'nn.functional.gelu_tanh', 'nn.functional.softplus', 'nn.functional.logsigmoid',
        'nn.functional.hardshrink', 'nn.functional.softshrink', 'nn.functional.normalize')},
    **{(name, None): NOT_GIVEN for name in (
        'argsort', 'split_copy', 'split_with_sizes_copy', 'unbind_copy',
        'linalg.lstsq')},
    ('nonzero', None): "torch's nonzero(as_tuple=True) takes no out=; dynagrad's does",
    ('where', None): "torch's where takes out= with tensor operands only; dynagrad's with all",
    ('std', None): "torch's std(x, unbiased) takes no out=; dynagrad's does",
    ('var', None): "torch's var(x, unbiased) takes no out=; dynagrad's does",
    ('diff', None): 'torch checks out= before the sample error dynagrad raises',
    ('mode', 'resized'): "torch's mode resizes a 0-dim result's out silently",
    ('linalg.svd', None): "singular vectors' signs are not unique: the row makes the returned "
                          "ones canonical, not those written into out",
    ('kron', None): "torch's kron writes out through a view: no version bump on out",
    ('matmul', None): "torch's matmul resizes out as its kernels do (1-D cases) and refuses "
                      'some casts its mm form allows',
    **{(name, 'resized'): 'torch resizes this out silently (a legacy kernel)'
       for name in ('addbmm', 'narrow_copy', 'index_reduce')},
    **{(name, 'dtype'): 'whether torch casts or wants the exact dtype depends on the overload '
                        '(a Scalar or Tensor operand): dynagrad has one rule per function'
       for name in ('lerp', 'ldexp', 'clamp_min', 'clamp_max', 'inner', 'matrix_power',
                    'linalg.matrix_power', 'all')},
}


def _tol(out, computed):
    """The tolerance of the dtype the result was computed in, when looser than out's."""
    kinds = [conformance.dtype_name(t) for t in (out, computed)]
    tols = [conformance.FWD_TOL[k] for k in kinds if k in conformance.FWD_TOL]
    if not tols:
        return conformance.FWD_TOL
    return {kinds[0]: max(tols, key=lambda t: t['rtol'])}


def _check_variant(op, sample, expected, name, make):
    d, t = conformance.same_exception(_run(op, sample, expected, make))
    if t is None:
        return
    (d_res, d_outs, d_before, d_warned), (t_res, t_outs, t_before, t_warned) = d, t
    assert d_warned == t_warned, f'{name}: dynagrad warned {d_warned}, torch {t_warned}'
    d_list, t_list = conformance.outputs(d_res), conformance.outputs(t_res)
    assert len(d_list) == len(t_list), f'{name}: number of results'
    for k, (a, b, ao, bo) in enumerate(zip(d_list, t_list, d_outs, t_outs)):
        assert (a is ao) == (b is bo), f'{name}: result {k} is out {k}'
    for k, (a, e, c) in enumerate(zip(d_outs, t_outs, conformance.outputs(expected))):
        conformance.assert_same(a, e, _tol(e, c), what=f'{name}, out {k}')
    for k, (o, v0, tv0, tv) in enumerate(zip(d_outs, d_before, t_before, t_outs)):
        assert (o._version > v0) == (tv._version > tv0), f'{name}: version of out {k}'


@pytest.mark.parametrize('op,sample,i', _rows())
def test_out(op, sample, i):
    t_args, t_kw, _, _ = conformance.build(torch, sample, requires_grad=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            expected = op.call(torch, *t_args, **t_kw)
    except Exception:   # noqa: BLE001 - an error sample of the forward check, not ours
        pytest.skip('torch refuses the sample itself')
    results = conformance.outputs(expected)
    if not results or not all(isinstance(r, torch.Tensor) for r in results) \
            or any(r.is_sparse for r in results):
        pytest.skip('not a function of dense tensors')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _run(op, sample, expected, VARIANTS[0][1])(torch)
    except TypeError:
        if (op.name, None) not in OUT_KNOWN:
            # torch takes no out= in this overload: neither does dynagrad
            with pytest.raises(TypeError):
                _run(op, sample, expected, VARIANTS[0][1])(dynagrad)
        return
    except Exception:   # noqa: BLE001 - torch takes out= but refuses this one (a dtype rule)
        pass
    RAN['rows'] += 1
    failures = []
    for name, make in VARIANTS:
        try:
            _check_variant(op, sample, expected, name, make)
        except (Exception, pytest.fail.Exception) as e:  # noqa: BLE001 - an error too
            failures.append((name, e))
    if not failures:
        return
    reasons = {OUT_KNOWN.get((op.name, name)) or OUT_KNOWN.get((op.name, None))
               for name, _ in failures}
    if None in reasons:
        name, e = failures[0]
        raise AssertionError(f'{name}: {e}') from e
    pytest.xfail('; '.join(sorted(reasons)))


def test_column_ran():
    if not RAN['rows']:
        pytest.skip('runs after test_out')
    assert RAN['rows'] > 1000


# -- targeted -----------------------------------------------------------------------------

GRAD_MESSAGE = ("add(): functions with out=... arguments don't support automatic "
                "differentiation, but one of the arguments requires grad.")


@pytest.mark.parametrize('lib', [dynagrad, torch], ids=['dynagrad', 'torch'])
@pytest.mark.parametrize('who', ['input', 'out'])
def test_grad_refused(lib, who):
    x = lib.ones(3, requires_grad=who == 'input')
    out = lib.zeros(3, requires_grad=who == 'out')
    with pytest.raises(RuntimeError) as info:
        lib.add(x, x, out=out)
    assert str(info.value) == GRAD_MESSAGE
    assert out.tolist() == [0.0, 0.0, 0.0] and out._version == 0   # nothing written
    with lib.no_grad():
        assert lib.add(x, x, out=out) is out
    assert out.tolist() == [2.0, 2.0, 2.0] and out.requires_grad == (who == 'out')


@pytest.mark.parametrize('lib', [dynagrad, torch], ids=['dynagrad', 'torch'])
def test_grad_refused_through_a_list(lib):
    a = lib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^cat\(\): functions with out=\.\.\. arguments"):
        lib.cat([a, a], out=lib.empty(0))


def _both(fn):
    return fn(dynagrad), fn(torch)


def test_several_results():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for call in (lambda lib, o: lib.max(lib.tensor(x), 1, out=o),
                 lambda lib, o: lib.sort(lib.tensor(x), 0, descending=True, out=o),
                 lambda lib, o: lib.topk(lib.tensor(x), 2, out=o),
                 lambda lib, o: lib.min(lib.tensor(x), 0, True, out=o)):
        def run(lib):
            o = (lib.empty(0), lib.empty(0, dtype=lib.int64))
            r = call(lib, o)
            assert r[0] is o[0] and r[1] is o[1] and r.values is o[0] and r.indices is o[1]
            return r
        d, t = _both(run)
        conformance.assert_same_outputs(d, t)


@pytest.mark.parametrize('bad', ['values_dtype', 'indices_dtype', 'one', 'tensor'])
def test_several_results_refused(bad):
    x = np.ones((2, 3), np.float32)

    def run(lib):
        v, i = lib.empty(0), lib.empty(0, dtype=lib.int64)
        out = {'values_dtype': (lib.empty(0, dtype=lib.float64), i),
               'indices_dtype': (v, lib.empty(0, dtype=lib.int32)),
               'one': (v,), 'tensor': v}[bad]
        return lib.max(lib.tensor(x), 0, out=out)
    kind = RuntimeError if bad.endswith('dtype') else TypeError
    for lib in (torch, dynagrad):
        with pytest.raises(kind):
            run(lib)


def test_version_bump_and_identity():
    for lib in (dynagrad, torch):
        out = lib.zeros(2, 2)
        view = out[0]
        r = lib.exp(lib.zeros(2, 2), out=out)
        assert r is out and out._version == 1 and view._version == 1
        assert view.tolist() == [1.0, 1.0]           # written in place: views see it
        lib.mm(lib.eye(2), lib.eye(2), out=out)
        assert out._version == 2


def test_resize_warns_and_keeps_identity():
    for lib in (dynagrad, torch):
        out = lib.zeros(2, 2)
        with pytest.warns(UserWarning, match=r'An output with one or more elements was resized '
                                             r'since it had shape \[2, 2\], which does not '
                                             r'match the required output shape \[3\]'):
            r = lib.add(lib.ones(3), 1, out=out)
        assert r is out and out.shape == (3,) and out.tolist() == [2.0, 2.0, 2.0]
        empty = lib.empty(0)
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            lib.sum(lib.ones(2, 3), 1, out=empty)
        assert empty.tolist() == [3.0, 3.0]


def test_dtype_rules():
    for lib in (dynagrad, torch):
        x = lib.tensor([1.5, -2.0])
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the "
                                               "desired output type Long"):
            lib.mul(x, 2, out=lib.zeros(2, dtype=lib.int64))
        o = lib.zeros(2, dtype=lib.float64)
        assert lib.mul(x, 2, out=o).dtype == lib.float64 and o.tolist() == [3.0, -4.0]
        o = lib.zeros(2, dtype=lib.int32)
        assert lib.add(lib.tensor([1, 2]), 3, out=o).tolist() == [4, 5] and o.dtype == lib.int32
        with pytest.raises(RuntimeError, match='Expected out tensor to have dtype float, but '
                                               'got double instead'):
            lib.mm(lib.ones(2, 2), lib.ones(2, 2), out=lib.empty(0, dtype=lib.float64))


def test_overlapping_out():
    for lib in (dynagrad, torch):
        a = lib.tensor([1.0, 2.0, 3.0])
        b = lib.tensor([10.0, 20.0, 30.0])
        assert lib.add(a, b, out=a) is a and a.tolist() == [11.0, 22.0, 33.0]
        # (torch's mm(m, m, out=m) reads an output it zeroed first: undefined, not checked)
        c = lib.tensor([3.0, 1.0, 2.0])
        assert lib.cumsum(c, 0, out=c).tolist() == [3.0, 4.0, 6.0]


CREATION = [
    ('zeros', lambda lib, o: lib.zeros(2, 3, out=o)),
    ('ones', lambda lib, o: lib.ones((2,), out=o)),
    ('full', lambda lib, o: lib.full((2, 2), 1.5, out=o)),
    ('eye', lambda lib, o: lib.eye(3, out=o)),
    ('arange', lambda lib, o: lib.arange(5.5, out=o)),
    ('arange_step', lambda lib, o: lib.arange(1, 4, 0.5, out=o)),
    ('linspace', lambda lib, o: lib.linspace(0, 1, 5, out=o)),
    ('logspace', lambda lib, o: lib.logspace(0, 2, 3, out=o)),
    ('fftfreq', lambda lib, o: lib.fft.fftfreq(4, out=o)),
]


# dynagrad's factories themselves make these dtypes where torch's refuse them, out= or not
# (arange(5, dtype=torch.bool) is refused too): a creation bug, not an out= rule
CREATION_KNOWN = {('arange', 'bool'), ('arange_step', 'bool'), ('linspace', 'bool'),
                  ('logspace', 'bool'), ('fftfreq', 'int64'), ('fftfreq', 'int32'),
                  ('fftfreq', 'bool')}


@pytest.mark.parametrize('dtype', ['float32', 'float64', 'int64', 'int32', 'bool'])
@pytest.mark.parametrize('name,call', CREATION, ids=[c[0] for c in CREATION])
def test_creation(name, call, dtype):
    if (name, dtype) in CREATION_KNOWN:
        pytest.xfail('the factory makes a dtype torch refuses (without out= too)')
    def run(lib):
        o = lib.empty(0, dtype=getattr(lib, dtype))
        r = call(lib, o)
        assert r is o
        return r
    d, t = conformance.same_exception(run)
    if t is not None:
        conformance.assert_same(d, t)


def test_creation_dtype_mismatch():
    for lib in (dynagrad, torch):
        with pytest.raises(RuntimeError, match=r'dtype Float does not match dtype of out '
                                               r'parameter \(Long\)'):
            lib.zeros(2, dtype=lib.float32, out=lib.empty(0, dtype=lib.int64))


def test_out_must_be_a_tensor():
    for lib in (dynagrad, torch):
        with pytest.raises(TypeError, match="argument 'out' must be Tensor, not int"):
            lib.exp(lib.ones(2), out=3)


def test_namespaces():
    x = np.random.default_rng(1).standard_normal((3, 3))
    for call in (lambda lib, o: lib.linalg.inv(lib.tensor(x), out=o),
                 lambda lib, o: lib.special.erfcx(lib.tensor(x), out=o),
                 lambda lib, o: lib.special.xlog1py(lib.tensor(x), 2.0, out=o),
                 lambda lib, o: lib.fft.rfft(lib.tensor(x), out=o.to(lib.complex128)),
                 lambda lib, o: lib.softmax(lib.tensor(x), 0, out=o),
                 lambda lib, o: lib.cholesky_inverse(lib.eye(3, dtype=lib.float64), out=o)):
        d, t = _both(lambda lib: call(lib, lib.empty(0, dtype=lib.float64)))
        conformance.assert_same(d, t)


def test_methods_of_torch_refuse_out():
    """torch's Tensor methods take no out=; the wrapped function forms leave them alone."""
    x = dynagrad.ones(2, 2)
    with pytest.raises(TypeError):
        x.mm(x, out=dynagrad.empty(0))
    with pytest.raises(TypeError):
        x.sum(0, out=dynagrad.empty(0))
