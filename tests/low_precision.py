"""The op table (tests/op_db) run in float16 or bfloat16 against torch, for
tests/test_float16.py and tests/test_bfloat16.py.

Every sample whose float inputs are float32 is rebuilt with those inputs in the low dtype
(keyword tensors, such as targets given by name, stay as they are), on both libraries.
Checked: torch raises iff dynagrad raises; else the outputs' dtypes, shapes and values, and
the gradients of every low-precision input for the same random upstream gradient, with
tolerances of the dtype's precision.
"""
import warnings

import numpy as np
import torch

import dynagrad
from op_db import OPS, NC, DT

# values: a few ulps of the dtype; gradients compose several rounded ops
TOL = {'float16': dict(rtol=1e-3, atol=1e-3), 'bfloat16': dict(rtol=1.6e-2, atol=1e-2)}
GRAD_TOL = {'float16': dict(rtol=5e-3, atol=5e-3), 'bfloat16': dict(rtol=5e-2, atol=5e-2)}
RANDOM = ('dropout', 'rrelu', 'rand', 'bernoulli', 'normal', 'multinomial', 'poisson')


def samples(op):
    """The op's samples with float32 inputs, no float64 and nothing empty."""
    out = []
    for s in op.get_samples():
        arrays = s.tensor_arrays()
        if (any(a.dtype == np.float32 for a in arrays)
                and not any(a.dtype == np.float64 for a in arrays) and not s.has_empty):
            out.append(s)
    return out


def ops_with_samples():
    return [op for op in OPS if samples(op)]


def build(lib, sample, low, requires_grad=True):
    """``sample``'s arguments for ``lib``, float32 tensors converted to ``low`` (a dtype name,
    or None to keep float32): ``(args, kwargs, leaves)``."""
    leaves = []

    def make(array):
        return torch.from_numpy(array.copy()) if lib is torch else dynagrad.tensor(array.copy())

    def conv(a, pos):
        if isinstance(a, (NC, np.ndarray)) and pos is not None:
            array = a.array if isinstance(a, NC) else a
            t = make(array)
            if array.dtype == np.float32 and low is not None:
                t = t.to(getattr(lib, low)).requires_grad_(sample.requires_grad and requires_grad)
            leaves.append(t)
            return a.view(t) if isinstance(a, NC) else t
        if isinstance(a, np.ndarray):
            return make(a)
        if isinstance(a, tuple):
            return tuple(conv(x, None) for x in a)
        if isinstance(a, list):
            return [conv(x, None) for x in a]
        if isinstance(a, DT):
            return getattr(lib, a.name)
        return a
    args = tuple(conv(a, i) for i, a in enumerate(sample.args))
    kwargs = {k: conv(v, None) for k, v in sample.kwargs.items()}
    return args, kwargs, leaves


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _values(t):
    t = t.detach()
    if str(t.dtype).split('.')[-1] in ('float16', 'bfloat16'):
        t = t.float()
    return t.numpy()


def _name(t):
    return str(t.dtype).split('.')[-1]


def check_sample(op, sample, low):
    """Run one sample on both libraries in ``low``; raise AssertionError on a difference."""
    call = ((lambda lib, x, *a, **k: getattr(x, op.method)(*a, **k)) if sample.method_only
            else op.call)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            targs, tkw, tleaves = build(torch, sample, low)
            torch.manual_seed(0)
            expected = call(torch, *targs, **tkw)
        except Exception as e:  # noqa: BLE001 (torch decides what is an error)
            dargs, dkw, _ = build(dynagrad, sample, low)
            try:
                call(dynagrad, *dargs, **dkw)
            except Exception:  # noqa: BLE001
                return
            raise AssertionError(f'torch raised {type(e).__name__}: {e}; dynagrad did not')
        dargs, dkw, dleaves = build(dynagrad, sample, low)
        dynagrad.manual_seed(0)
        actual = call(dynagrad, *dargs, **dkw)
        exp, act = _outputs(expected), _outputs(actual)
        assert len(act) == len(exp), 'number of outputs'
        for k, (a, e) in enumerate(zip(act, exp)):
            if not isinstance(e, torch.Tensor):
                continue
            assert _name(a) == _name(e), f'output {k} dtype: {_name(a)} vs torch {_name(e)}'
            assert tuple(a.shape) == tuple(e.shape), f'output {k} shape'
            if any(r in op.name for r in RANDOM):
                continue
            if e.dtype.is_floating_point:
                np.testing.assert_allclose(_values(a), _values(e), equal_nan=True,
                                           err_msg=f'output {k}', **TOL[low])
            else:
                np.testing.assert_array_equal(_values(a), _values(e), err_msg=f'output {k}')
        tdiff = [o for o in exp if isinstance(o, torch.Tensor) and o.requires_grad]
        if not tdiff or not op.differentiable:
            return
        ddiff = [o for o in act if isinstance(o, dynagrad.Tensor) and o.requires_grad]
        assert len(ddiff) == len(tdiff), 'differentiable outputs'
        rng = np.random.default_rng(0)
        grads = [rng.standard_normal(tuple(o.shape)).astype(np.float32) for o in tdiff]
        try:
            torch.autograd.backward(tdiff, [torch.from_numpy(g).to(o.dtype)
                                            for g, o in zip(grads, tdiff)])
        except Exception:  # noqa: BLE001 (no derivative in torch: nothing to compare)
            return
        dynagrad.autograd.backward(ddiff, [dynagrad.tensor(g).to(o.dtype)
                                           for g, o in zip(grads, ddiff)])
        for i, (a, e) in enumerate(zip(dleaves, tleaves)):
            if not e.dtype.is_floating_point or not e.requires_grad or e.grad is None:
                continue
            assert a.grad is not None, f'grad of input {i} is None; torch has one'
            assert _name(a.grad) == _name(e.grad), f'grad {i} dtype'
            np.testing.assert_allclose(_values(a.grad), _values(e.grad), equal_nan=True,
                                       err_msg=f'grad of input {i}', **GRAD_TOL[low])


def check_op(op, low, known):
    """Every sample of ``op`` in ``low``, except the ``known`` differences (descs); the
    failures listed together."""
    failures = []
    for s in samples(op):
        if s.desc in known:
            continue
        try:
            check_sample(op, s, low)
        except AssertionError as e:
            failures.append(f'{op.name}[{s.desc}]: {str(e)[:600]}')
    assert not failures, '\n'.join(failures)


def still_differs(op, desc, low):
    """Whether the known difference ``op[desc]`` is still there (so the list stays true)."""
    for s in samples(op):
        if s.desc == desc:
            try:
                check_sample(op, s, low)
            except AssertionError:
                return True
            return False
    raise LookupError(f'{op.name} has no sample {desc!r}')
