"""torch._foreach_*: every name of the installed torch, run through a table of samples on
both libraries: values and dtypes, in-place effects (the same list returned, each tensor
written, versions counted), gradients of the out-of-place forms, and errors (type and
message), including dynagrad's one difference: an in-place call that fails writes nothing.
"""
from collections import namedtuple

import numpy as np
import pytest
import torch

import dynagrad

TORCH_NAMES = sorted(n for n in dir(torch) if n.startswith('_foreach_'))
_RNG = np.random.default_rng(0)


def f32(*shape, lo=0.2, hi=0.8):
    return _RNG.uniform(lo, hi, shape).astype(np.float32)


def f64(*shape, lo=0.2, hi=0.8):
    return _RNG.uniform(lo, hi, shape)


def f16(*shape):
    return f32(*shape).astype(np.float16)


def i64(*shape, lo=1, hi=5):
    return _RNG.integers(lo, hi, shape)


def c64(*shape):
    return (f32(*shape) + 1j * f32(*shape)).astype(np.complex64)


class Dt:
    """A dtype by name, made in each library."""
    def __init__(self, name):
        self.name = name


class Mf(Dt):
    """A memory format by name."""


class Tn:
    """One tensor (not a list element): a 0-dim scalar, a packed scalar list."""
    def __init__(self, array):
        self.array = np.asarray(array)


Sample = namedtuple('Sample', 'name args kwargs loose')


def S(name, *args, loose=False, **kwargs):
    """``loose``: the error message differs in wording (the type must still match)."""
    return Sample(name, args, kwargs, loose)


UNARY = ['abs', 'acos', 'asin', 'atan', 'ceil', 'cos', 'cosh', 'erf', 'erfc', 'exp', 'expm1',
         'floor', 'frac', 'lgamma', 'log', 'log10', 'log1p', 'log2', 'neg', 'reciprocal',
         'round', 'rsqrt', 'sigmoid', 'sign', 'sin', 'sinh', 'sqrt', 'tan', 'tanh', 'trunc']
BINARY = ['add', 'sub', 'mul', 'div', 'clamp_min', 'clamp_max', 'maximum', 'minimum', 'pow']


def _powsum_ref(tensors, ord=2, dtype=None):
    return tuple((t.to(dtype) if dtype else t).abs().pow(ord).sum() for t in tensors)


def _packed_ref(op):
    def ref(tensors, t1, t2, scalars):
        return tuple(getattr(torch, op)(a, b, c, value=v)
                     for a, b, c, v in zip(tensors, t1, t2, scalars.tolist()))
    return ref


def _reference(name, args):
    """Where torch's foreach has no derivative (powsum, the packed-scalars forms of addcmul
    and addcdiv): torch's single ops, whose gradient dynagrad's loop of single ops has."""
    if name == '_foreach_powsum':
        return _powsum_ref
    if name in ('_foreach_addcmul', '_foreach_addcdiv') and isinstance(args[-1], torch.Tensor):
        return _packed_ref(name[len('_foreach_'):])
    return None


def samples():
    out = []
    for name in UNARY:
        for form in (name, name + '_'):
            out += [S(form, [f32(3), f64(2, 2)]),
                    S(form, (f32(2, 3),)),                      # a tuple works as a list
                    S(form, [i64(3)]),
                    S(form, []), S(form, f32(3)), S(form, [f32(3)], 1)]
        out += [S(name, [f16(4)])]
    for name in BINARY:
        for form in (name, name + '_'):
            out += [
                S(form, [f32(3), f64(2, 2)], 0.5),
                S(form, [f32(3), f64(2, 2)], 2),
                S(form, [i64(3)], 2),
                S(form, [i64(3)], 1.5),
                S(form, [i64(3), f32(2)], 1.5),            # in place: the second is fine...
                S(form, [f32(3), i64(2)], 1.5),            # ...but here the first is
                S(form, [f32(3), f64(2, 2)], [0.5, 3]),
                S(form, [f32(3), i64(2)], [2, 0.5]),
                S(form, [f32(3), f64(2, 2)], [f32(3), f32(2, 2)]),
                S(form, [f32(2, 3)], [f32(3)]),            # broadcast: in place only this way
                S(form, [f32(3)], [f32(2, 3)]),
                S(form, [f32(3)], [f32(2)]),
                S(form, [i64(3), f32(3)], [f32(3), f32(3)]),
                S(form, [f32(3)], Tn(0.5)),                # a 0-dim tensor: Tensor or Number
                S(form, [f32(3), f32(2)], [0.5]),
                S(form, [f32(3), f32(2)], []),
                S(form, [f32(3)], [f32(3), f32(3)]),
                S(form, [], 1), S(form, [], [f32(3)]), S(form, [], []),
                S(form, [f32(3)], 'x'), S(form, f32(3), 1), S(form, [f32(3)], None),
                S(form, [f32(3), 1], 1), S(form, [f32(3)], [f32(3), 1]),
                S(form, [f32(3)], Tn([0.5, 1])),
                S(form, [f32(3)]),
            ]
        if name != 'pow':
            out += [S(name, [f32(3)], 1 + 2j), S(name, [c64(3)], 2)]
    for form in ('add', 'add_', 'sub', 'sub_'):
        out += [S(form, [f32(3), f64(2, 2)], [f32(3), f64(2, 2)], alpha=2),
                S(form, [i64(3)], [i64(3)], alpha=1.5),
                S(form, [f32(3)], [f32(3)], alpha=2j),
                S(form, [f32(3)], [f32(3)], alpha=None),
                S(form, [f32(3)], 1, alpha=2),
                S(form, [f32(3)], other=[f32(3)], alpha=Tn(3.0)),
                S(form, [f32(3)], [f32(3)], 2),
                S(form, [f32(3)], [f32(3)], foo=2),
                S(form, self=[f32(3)], scalar=2)]
    for form in ('add', 'add_', 'mul', 'mul_', 'div', 'div_'):
        out += [S(form, [f32(3), f64(2, 2)], Tn(np.float64(2.5))),
                S(form, [i64(3)], Tn(2.5)),
                S(form, [], Tn(2.5)),
                S(form, [f32(3)], Tn([2.5]))]
    out += [S('add', [f32(3)], Tn(2.0), alpha=3), S('mul', [f32(3)], Tn(2.0), alpha=3)]
    for form in ('sub', 'sub_'):
        out += [S(form, [np.array([True])], True), S(form, [np.array([True])], 1)]
    out += [S('pow', 2, [f32(3), i64(2)]), S('pow', 2.5, [i64(3)]), S('pow', Tn(2.0), [f32(3)]),
            S('pow', self=2.5, exponent=[f32(3)]), S('pow', [i64(3)], -1),
            S('pow', [f32(3)], exponent=[i64(3)]), S('pow_', 2, [f32(3)]), S('pow', 2, [])]
    for op in ('addcmul', 'addcdiv'):
        for form in (op, op + '_'):
            three = ([f32(3), f64(2, 2)], [f32(3), f32(2, 2)], [f32(3), f64(2, 2)])
            out += [
                S(form, *three), S(form, *three, 0.5), S(form, *three, value=2),
                S(form, *three, [0.5, 2]), S(form, *three, scalars=[0.5, 2]),
                S(form, *three, Tn([0.5, 2.0])),
                S(form, *three, Tn([1, 2])),
                S(form, *three, Tn(0.5)), S(form, *three, Tn([[0.5, 2.0]])),
                S(form, *three, Tn([0.5, 2.0, 3.0])),
                S(form, *three, [0.5]),
                S(form, *three, 2.5j),
                S(form, [f32(3), f32(2)], [f32(3)], [f32(3), f32(2)]),
                S(form, [f32(3), f32(2)], [f32(3), f32(2)], [f32(3)]),
                S(form, [f32(3), f32(2)], [f32(3)], [f32(3), f32(2)], Tn([1.0])),
                S(form, [], [], []), S(form, [], [f32(3)], [f32(3)]),
                S(form, [f32(2, 3)], [f32(3)], [f32(2, 1)]),
                S(form, [f32(3)], [f32(2, 3)], [f32(3)]),
                S(form, [i64(3)], [i64(3)], [i64(3)], 2),
                S(form, [i64(3)], [i64(3)], [i64(3)], 2.5),
                S(form, [f32(3), i64(3)], [f32(3), i64(3)], [f32(3), i64(3)], 2),
                S(form, [f32(3)], [f32(3)]),
            ]
    for form in ('lerp', 'lerp_'):
        out += [S(form, [f32(3), f64(2, 2)], [f32(3), f64(2, 2)], 0.25),
                S(form, [f32(3), f64(2, 2)], [f32(3), f64(2, 2)], [0.25, 2]),
                S(form, [f32(3), f64(2, 2)], [f32(3), f64(2, 2)], [f32(3), f64(2, 2)]),
                S(form, [f32(3), f64(2, 2)], tensors1=[f32(3), f64(2, 2)],
                  weights=[f32(3), f64(2, 2)]),
                S(form, [f32(3)], [f32(3)], weight=Tn(0.5)),
                S(form, [f32(2, 3)], [f32(3)], [f32(2, 1)]),
                S(form, [f32(3)], [f64(3)], 0.5), S(form, [f32(3)], [f32(3)], [f64(3)]),
                S(form, [i64(3)], [i64(3)], 0.5),
                S(form, [f32(3)], [f32(3)], [0.5, 1]),
                S(form, [f32(3)], [f32(3), f32(3)], [0.5]),
                S(form, [f32(3)], [f32(3)], []), S(form, [], [], 0.5),
                S(form, [f32(3)], [f32(3)], 1j)]
    out += [S('mm', [f32(2, 3), f64(1, 2)], [f32(3, 4), f64(2, 2)]),
            S('mm', [i64(2, 3)], [i64(3, 1)]),
            S('mm', [f32(2, 3)], [f32(2, 4)]), S('mm', [f32(3)], [f32(3, 4)]),
            S('mm', [f32(3, 1)], [f32(3)]),
            S('mm', [f32(2, 3)], [f64(3, 4)], loose=True),     # mm names dtypes float32, not float
            S('mm', [], []), S('mm', [], [f32(1, 1)]), S('mm', [f32(1, 1)], []),
            S('mm', [f32(1, 1), f32(1, 1)], [f32(1, 1)]), S('mm', [f32(1, 1)])]
    out += [S('copy_', [f32(3), f32(2)], [i64(3), np.array(7)]),
            S('copy_', [f32(3), f64(2, 2)], [f64(3), f32(2)]),
            S('copy_', [i64(3)], [f32(3)]),
            S('copy_', [f32(3), f32(2)], [f32(3), f32(3)]),
            S('copy_', [f32(3)], [f32(3)], True), S('copy_', [f32(3)], [f32(3)], 1),
            S('copy_', [f32(3)], src=[f32(3)], non_blocking=1),
            S('copy_', [f32(3)], src=[f32(3)], non_blocking=False),
            S('copy_', [f32(3)], []), S('copy_', [], [f32(3)]), S('copy_', [], []),
            S('copy_', [f32(3), f32(3)], [f32(3)])]
    out += [S('zero_', [f32(3), i64(2, 2), np.array([True])]), S('zero_', []),
            S('zero_', [f32(3)], 1), S('zero_', f32(3))]
    out += [S('clone', [f32(3), i64(2, 2)]), S('clone', [f32(1, 2, 3, 4)],
                                                memory_format=Mf('channels_last')),
            S('clone', [f32(3)], memory_format=Mf('contiguous_format')),
            S('clone', [f32(3)], memory_format=Mf('channels_last')),
            S('clone', [f32(3)], Mf('channels_last')), S('clone', [])]
    out += [S('max', [f32(3), f64(2, 2), i64(4), np.array([True, False])]),
            S('max', [f32(3), np.zeros(0, np.float32)]), S('max', [np.array([1.0, np.nan])]),
            S('max', [c64(2)]), S('max', []), S('max', [f32(3)], 1)]
    for ord in (2, 1, 3, 2.5, -1, 0, float('inf'), -float('inf')):
        out += [S('norm', [f32(3), f64(2, 2), np.zeros(2, np.float32)], ord),
                S('powsum', [f32(3, lo=-1), f64(2, 2)], ord)]
    out += [S('norm', [f32(3), f64(2, 2)], dtype=Dt('float64')),
            S('norm', [f32(3)], 2, Dt('float64')), S('norm', [f16(3)]),
            S('norm', [f16(3)], dtype=Dt('float32')), S('norm', [c64(3)]),
            S('norm', [c64(3)], dtype=Dt('complex128')),
            S('norm', [f32(3)], dtype=Dt('complex128')),
            S('norm', [f32(3)], dtype=Dt('float16')), S('norm', [f64(3)], dtype=Dt('float32')),
            S('norm', [f32(3)], dtype=Dt('int64')), S('norm', [i64(3)]),
            S('norm', [f32(3), i64(3)]), S('norm', [np.array([True])]),
            S('norm', [np.zeros(0, np.float32)], float('inf')),
            S('norm', [np.zeros(0, np.float32)], -float('inf')),
            S('norm', [np.zeros(0, np.float32)], 2),
            S('norm', [f32(3)], True), S('norm', [f32(3)], 2j), S('norm', [f32(3)], 'fro'),
            S('norm', [f32(3)], None), S('norm', [f32(3)], 2, 'x'), S('norm', []),
            S('norm', [f32(3)], dtype=Dt('float64'), ord=1)]
    out += [S('powsum', [f32(3)], dtype=Dt('float64')),
            S('powsum', [f16(3)], 0.5), S('powsum', [f16(3)], dtype=Dt('float32')),
            S('powsum', [f32(3)], dtype=Dt('float16')), S('powsum', [c64(3)]),
            S('powsum', [f32(3)], dtype=Dt('complex64')), S('powsum', [i64(3)]),
            S('powsum', [i64(3)], dtype=Dt('float32')),
            S('powsum', [np.array([1, 2], np.int32)]), S('powsum', [np.array([True])]),
            S('powsum', [f32(3)], dtype=Dt('int32')), S('powsum', [f32(3)], dtype=Dt('bool')),
            S('powsum', [f32(3)], True), S('powsum', [f32(3)], 1j),
            S('powsum', [np.zeros(0, np.float32)]), S('powsum', [np.zeros(3, np.float32)], -1),
            S('powsum', [])]
    return out


SAMPLES = samples()


def _ident(s):
    def show(v):
        if isinstance(v, np.ndarray):
            return f'{v.dtype}{list(v.shape)}'
        if isinstance(v, (list, tuple)):
            return '[' + ','.join(show(x) for x in v) + ']'
        if isinstance(v, (Dt, Tn)):
            return getattr(v, 'name', None) or f'T{list(v.array.shape)}'
        return repr(v)
    kw = [f'{k}={show(v)}' for k, v in s.kwargs.items()]
    return s.name + '(' + ','.join([show(a) for a in s.args] + kw) + ')'


def _convert(lib, value, grad=False, in_list=False):
    if isinstance(value, np.ndarray):
        t = lib.tensor(value.copy())
        if grad and in_list and t.is_floating_point():
            t.requires_grad_()
        return t
    if isinstance(value, (list, tuple)):
        return type(value)(_convert(lib, v, grad, True) for v in value)
    if isinstance(value, Tn):
        return lib.tensor(value.array.copy())
    if isinstance(value, Dt):
        return getattr(lib, value.name)
    return value


def _run(lib, s, grad=False):
    args = [_convert(lib, a, grad) for a in s.args]
    kwargs = {k: _convert(lib, v, grad) for k, v in s.kwargs.items()}
    try:
        return args, kwargs, getattr(lib, s.name)(*args, **kwargs), None
    except Exception as e:     # noqa: BLE001  (compared with torch's below)
        return args, kwargs, None, e


def _same(d, t):
    assert isinstance(d, dynagrad.Tensor)
    assert str(d.dtype).split('.')[-1] == str(t.dtype).split('.')[-1]
    assert tuple(d.shape) == tuple(t.shape)
    tight = t.dtype in (torch.float64, torch.complex128, torch.int64)
    rtol = 1e-12 if tight else 2e-3 if t.dtype in (torch.float16, torch.bfloat16) else 1e-5
    np.testing.assert_allclose(d.detach().numpy(), t.detach().numpy(), rtol=rtol,
                               atol=rtol * 1e-1, equal_nan=True)


def _first_line(e):
    return str(e).split('\n')[0].replace('torch.dtype', 'dynagrad.dtype')


def _tensors(value):
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return [value] if isinstance(value, (dynagrad.Tensor, torch.Tensor)) else []


def test_every_foreach_name_of_torch_is_in_dynagrad_and_sampled():
    assert len(TORCH_NAMES) > 80
    ours = sorted(n for n in dir(dynagrad) if n.startswith('_foreach_'))
    assert ours == TORCH_NAMES
    assert {s.name for s in SAMPLES} == {n[len('_foreach_'):] for n in TORCH_NAMES}
    assert all(callable(getattr(dynagrad, n)) for n in TORCH_NAMES)


@pytest.mark.parametrize('s', SAMPLES, ids=_ident)
def test_matches_torch(s):
    s = s._replace(name='_foreach_' + s.name)
    targs, tkw, tout, terr = _run(torch, s)
    dargs, dkw, dout, derr = _run(dynagrad, s)
    inplace = s.name.endswith('_')
    if terr is not None:
        assert derr is not None, f'torch raised {terr!r}, dynagrad returned {dout}'
        assert type(derr) is type(terr), (derr, terr)
        cast = "can't be cast to the desired output type"
        if not s.loose and not (cast in str(terr) and cast in str(derr)):
            # (which dtype a failed cast names is the single ops' wording, tested with them)
            assert _first_line(terr) in str(derr), (str(derr), str(terr))
        # dynagrad writes nothing when a call fails (torch may have written some tensors)
        before = [_convert(dynagrad, a) for a in list(s.args) + list(s.kwargs.values())]
        after = _tensors(dargs) + _tensors(list(dkw.values()))
        assert len(after) == len(_tensors(before))
        for now, was in zip(after, _tensors(before)):
            assert now._version == 0
            np.testing.assert_array_equal(now.numpy(), was.numpy())
        return
    assert derr is None, f'dynagrad raised {derr!r}, torch returned {tout}'
    if inplace:
        dself, tself = dargs[0] if dargs else dkw['self'], targs[0] if targs else tkw['self']
        assert dout is dself and tout is tself
        for d, t in zip(dout, tout):
            _same(d, t)
            assert d._version == t._version == 1
        written = {id(d) for d in dself}
        for d in _tensors(dargs) + _tensors(list(dkw.values())):
            assert id(d) in written or d._version == 0     # the other operands are only read
    else:
        assert type(dout) is tuple and type(tout) is tuple and len(dout) == len(tout)
        for d, t in zip(dout, tout):
            _same(d, t)
        for d in _tensors(dargs):
            assert d._version == 0


def _grad_samples():
    chosen = []
    for s in SAMPLES:
        if s.name.endswith('_') or s.name == 'max' and 'nan' in _ident(s):
            continue
        args, _, out, err = _run(torch, s._replace(name='_foreach_' + s.name), grad=True)
        if err is None and any(t.requires_grad for t in _tensors(args)):
            chosen.append(s)
    return chosen


def _loss(lib, outs):
    total = 0
    for k, out in enumerate(outs):
        if out.is_floating_point() or out.is_complex():
            w = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) * 0.25 + k + 1
            total = total + (out.abs() if out.is_complex() else out).double().mul(w).sum()
    return total


@pytest.mark.parametrize('s', _grad_samples(), ids=_ident)
def test_gradients_of_out_of_place_forms_match_torch(s):
    s = s._replace(name='_foreach_' + s.name)
    targs, tkw, tout, _ = _run(torch, s, grad=True)
    dargs, dkw, dout, _ = _run(dynagrad, s, grad=True)
    tleaves = [t for t in _tensors(targs) + _tensors(list(tkw.values())) if t.requires_grad]
    dleaves = [t for t in _tensors(dargs) + _tensors(list(dkw.values())) if t.requires_grad]
    assert len(tleaves) == len(dleaves) and tleaves
    ref = _reference(s.name, targs)
    if ref is not None:    # torch's foreach has no derivative here: its single ops instead
        with pytest.raises(RuntimeError, match='not implemented'):
            torch.autograd.grad(_loss(torch, tout), tleaves, allow_unused=True)
        tout = ref(*targs, **tkw)
    tgrads = torch.autograd.grad(_loss(torch, tout), tleaves, allow_unused=True)
    dgrads = dynagrad.autograd.grad(_loss(dynagrad, dout), dleaves, allow_unused=True)
    for d, t, leaf in zip(dgrads, tgrads, tleaves):
        if t is None:
            assert d is None or not d.numpy().any()
            continue
        assert d is not None
        _same(d, t)


# -- in place: the single ops' history, leaves, and nothing written on failure ---------------

@pytest.mark.parametrize('name,extra', [
    ('mul_', (2.0,)), ('mul_', ([f32(3), f32(2)],)), ('add_', ([f32(3), f32(2)],)),
    ('exp_', ()), ('zero_', ()),
    ('lerp_', ([f32(3), f32(2)], 0.5)), ('addcdiv_', ([f32(3), f32(2)], [f32(3), f32(2)], 0.5)),
    ('maximum_', ([f32(3), f32(2)],)), ('clamp_min_', ([0.5, 0.4],)), ('pow_', (2,)),
    ('sigmoid_', ())])
def test_inplace_records_the_single_ops_history(name, extra):
    base = [f32(3), f32(2)]
    results = {}
    for lib in (torch, dynagrad):
        leaves = [lib.tensor(b.copy(), requires_grad=True) for b in base]
        ys = [x * 1 for x in leaves]
        args = [_convert(lib, e) for e in extra]
        returned = getattr(lib, '_foreach_' + name)(ys, *args)
        assert returned is ys
        names = [y.grad_fn.name() for y in ys]
        grads = lib.autograd.grad(_loss(lib, ys), leaves)
        results[lib.__name__] = names, grads, ys
    tnames, tgrads, tys = results['torch']
    dnames, dgrads, dys = results['dynagrad']
    if not any(isinstance(e, (int, float)) for e in extra):
        # PyTorch's foreach calls the Scalar overloads (MulBackward1); dynagrad has one op
        assert dnames == tnames
    for d, t in zip(dgrads + tuple(dys), tgrads + tuple(tys)):
        _same(d, t)


def test_inplace_on_a_leaf_that_requires_grad_writes_nothing():
    for lib in (torch, dynagrad):
        plain = lib.tensor([1.0, 2.0])
        leaf = lib.tensor([3.0], requires_grad=True)
        with pytest.raises(RuntimeError, match='a leaf Variable that requires grad'):
            lib._foreach_add_([plain, leaf], 1)
        assert plain.tolist() == [1.0, 2.0] and plain._version == 0
        with lib.no_grad():
            lib._foreach_add_([plain, leaf], 1)
        assert leaf.tolist() == [4.0]


def test_a_failing_element_stops_the_call_before_any_write():
    for lib in (torch, dynagrad):
        xs = [lib.tensor([1.0, 2.0]), lib.tensor([1, 2])]
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            lib._foreach_mul_(xs, 1.5)
        assert xs[0].tolist() == ([1.5, 3.0] if lib is torch else [1.0, 2.0])
        assert xs[0]._version == (1 if lib is torch else 0)


def test_a_zero_dim_tensor_that_requires_grad_is_not_a_number():
    for lib in (torch, dynagrad):
        w = lib.tensor(0.5, requires_grad=True)
        with pytest.raises(TypeError, match='received an invalid combination of arguments'):
            lib._foreach_maximum([lib.ones(2)], w)
        # where a Tensor is accepted it is differentiable
        out = lib._foreach_mul([lib.ones(2)], w)
        assert out[0].requires_grad


def test_optimizers_with_foreach_true_step_as_torchs():
    rng = np.random.default_rng(1)
    init = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    for name in ('SGD', 'Adam', 'AdamW', 'RMSprop', 'Adagrad'):
        final = {}
        for lib in (torch, dynagrad):
            params = [lib.tensor(p.copy(), requires_grad=True) for p in init]
            opt = getattr(lib.optim, name)(params, lr=0.1, foreach=True)
            for _ in range(3):
                for p, g in zip(params, grads):
                    p.grad = lib.tensor(g.copy())
                opt.step()
            final[lib.__name__] = params
        for d, t in zip(final['dynagrad'], final['torch']):
            _same(d, t)


def _adam_steps_with_foreach(lib, params, grads, steps=3, lr=0.1, betas=(0.9, 0.99), eps=1e-8):
    """PyTorch's multi-tensor Adam (and clip_grad_norm_'s foreach path), written with the
    foreach ops as torch.optim writes them, run on either library."""
    beta1, beta2 = betas
    exp_avgs = [lib.zeros_like(p) for p in params]
    exp_avg_sqs = [lib.zeros_like(p) for p in params]
    state_steps = [lib.tensor(0.0) for _ in params]
    for _ in range(steps):
        norms = lib._foreach_norm(grads, 2.0)
        total = lib.linalg.vector_norm(lib.stack(norms), 2.0)
        lib._foreach_mul_(grads, (1.0 / (total + 1e-6)).clamp(max=1.0))
        lib._foreach_add_(state_steps, 1)
        lib._foreach_lerp_(exp_avgs, grads, 1 - beta1)
        lib._foreach_mul_(exp_avg_sqs, beta2)
        lib._foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2)
        bias1 = lib._foreach_pow(beta1, state_steps)          # the capturable spelling
        lib._foreach_sub_(bias1, 1)
        lib._foreach_neg_(bias1)
        bias2 = [1 - beta2 ** s.item() for s in state_steps]
        step_size = [lr / b.item() * -1 for b in bias1]
        denom = lib._foreach_sqrt(exp_avg_sqs)
        lib._foreach_div_(denom, [b ** 0.5 for b in bias2])
        lib._foreach_add_(denom, eps)
        lib._foreach_addcdiv_(params, exp_avgs, denom, step_size)
    return params


def test_an_optimizer_written_with_foreach_ops_steps_as_torchs():
    rng = np.random.default_rng(2)
    init = [rng.standard_normal((3, 2)), rng.standard_normal(4).astype(np.float32)]
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(4).astype(np.float32)]
    out = {}
    for lib in (torch, dynagrad):
        with lib.no_grad():
            out[lib.__name__] = _adam_steps_with_foreach(
                lib, [lib.tensor(p.copy()) for p in init], [lib.tensor(g.copy()) for g in grads])
    for d, t in zip(out['dynagrad'], out['torch']):
        _same(d, t)
    assert not np.allclose(out['dynagrad'][0].numpy(), init[0])


def test_inplace_on_a_view_of_a_leaf_or_an_inference_tensor_writes_nothing():
    for lib in (torch, dynagrad):
        with lib.inference_mode():
            frozen = lib.ones(2)
        leaf = lib.tensor([3.0, 4.0], requires_grad=True)
        for bad, message in ((leaf[:1], 'a view of a leaf Variable'),
                             (frozen, 'Inplace update to inference tensor')):
            plain = lib.tensor([1.0, 2.0])
            with pytest.raises(RuntimeError, match=message):
                lib._foreach_add_([plain, bad], 1)
            # torch checks views of leaves first, and writes before an inference tensor
            written = lib is torch and bad is frozen
            assert plain.tolist() == ([2.0, 3.0] if written else [1.0, 2.0])


# -- the single ops whose refusals the foreach samples brought to PyTorch's ----------------

_I, _F, _C = np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0], np.float32), c64(3)


@pytest.mark.parametrize('call', [
    lambda L, t: L.add(t(_I), t(_I), alpha=1.5), lambda L, t: L.sub(t(_I), t(_I), alpha=0.5),
    lambda L, t: L.add(t(_F), t(_F), alpha=2j), lambda L, t: t(_I).add_(t(_I), alpha=True),
    lambda L, t: t(_I).sub_(t(_I), alpha=2.5), lambda L, t: L.add(t(_I), t(_F), alpha=1.5),
    lambda L, t: L.add(t(_I), t(_I), alpha=2), lambda L, t: L.add(t(_F), 1, alpha=True),
    lambda L, t: L.clamp_min(t(_C), 1), lambda L, t: L.clamp_max(t(_F), 1j),
    lambda L, t: t(_C).clamp_min_(0), lambda L, t: t(_F).clamp_max_(2j),
    lambda L, t: L.addcmul(t(_F), t(_F), t(_F), value=2j),
    lambda L, t: t(_F.astype(np.float64)).addcdiv_(t(_F), t(_F), value=2j),
    lambda L, t: L.lerp(t(_F), t(_F), 1j), lambda L, t: L.lerp(t(_C), t(_C), 1j),
    lambda L, t: L.clone(t(_F), memory_format=L.channels_last),
    lambda L, t: L.clone(t(np.ones((1, 2, 3), np.float32)), memory_format=L.channels_last_3d),
    lambda L, t: L.clone(t(np.ones((1, 2, 3, 4))), memory_format=L.channels_last),
    lambda L, t: L.linalg.vector_norm(t(_F), dtype=L.float16),
    lambda L, t: L.linalg.vector_norm(t(_F), dtype=L.bfloat16),
    lambda L, t: L.linalg.vector_norm(t(_F), dtype=L.int32),
    lambda L, t: L.linalg.vector_norm(t(_F), dtype=L.complex64),
    lambda L, t: L.linalg.vector_norm(t(_C), dtype=L.float32),
    lambda L, t: L.linalg.vector_norm(t(_C.astype(np.complex128)), dtype=L.complex64),
    lambda L, t: L.linalg.vector_norm(t(_C), dtype=L.complex128),
    lambda L, t: L.linalg.vector_norm(t(_F.astype(np.float16)), dtype=L.float64),
])
def test_single_ops_refuse_as_torch(call):
    outcomes = []
    for lib in (torch, dynagrad):
        try:
            outcomes.append(call(lib, lambda a: lib.tensor(a.copy())))
        except (RuntimeError, NotImplementedError) as e:
            outcomes.append(e)
    t, d = outcomes
    if isinstance(t, Exception):
        assert type(d) is type(t) and str(t) in str(d), (d, t)
    else:
        _same(d, t)


def test_an_in_place_call_checked_by_a_trial_compiles_whole():
    # mixed dtypes make the in-place call try one element on a copy first; that trial is
    # not part of what dynagrad.compile records, so the step still becomes one program
    from dynagrad._dynamo.testing import CompileCounter

    def step(lib, params, updates, scale):
        lib._foreach_mul_(updates, scale)
        lib._foreach_add_(params, updates)

    counter = CompileCounter()
    compiled = dynagrad.compile(lambda p, u, s: step(dynagrad, p, u, s), backend=counter)
    rng = np.random.default_rng(0)
    start = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    ups = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    mine = [dynagrad.tensor(a) for a in start]
    ref = [torch.tensor(a) for a in start]
    for k in range(4):
        scale = 0.5 + k
        compiled(mine, [dynagrad.tensor(a) for a in ups], dynagrad.tensor(scale))
        step(torch, ref, [torch.tensor(a) for a in ups], torch.tensor(scale))
    for m, r in zip(mine, ref):
        np.testing.assert_allclose(m.numpy(), r.numpy(), rtol=1e-12)
    assert counter.frame_count == 1
