"""dynagrad.autograd.forward_ad against torch.autograd.forward_ad: the API, its errors,
levels, views and in-place writes, and forward mode composed with reverse mode. (Every
op's tangent is checked against torch's by the conformance table: test_forward_ad.)"""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import dynagrad
import dynagrad.autograd.forward_ad as dfw

LIBS = [(dynagrad, dfw), (torch, tfw)]
R = np.random.default_rng(7)


def _both(fn):
    """fn(lib, fw) on both libraries, as NumPy arrays (None stays None)."""
    out = []
    for lib, fw in LIBS:
        r = fn(lib, fw)
        out.append(tuple(None if t is None else t.detach().numpy() for t in r))
    return out


def _assert_same(pair, **tol):
    mine, theirs = pair
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, **(tol or dict(rtol=1e-6, atol=1e-7)))


def test_tangent_of_a_small_model_matches_torch():
    x, v = R.standard_normal((4, 5)), R.standard_normal((4, 5))
    w, b = R.standard_normal((3, 5)), R.standard_normal(3)

    def run(lib, fw):
        F = lib.nn.functional
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(v))
            h = F.layer_norm(F.gelu(F.linear(d, lib.tensor(w), lib.tensor(b))), (3,))
            out = F.log_softmax(h.tanh() * h.exp(), -1)
            primal, tangent = fw.unpack_dual(out)
            return primal, tangent
    _assert_same(_both(run))


def test_views_and_inplace_writes_carry_tangents_as_torch():
    x, v = R.standard_normal((3, 4)), R.standard_normal((3, 4))

    def run(lib, fw):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(v))
            z = d.clone()
            z[0] = 5.0                      # a write through a view zeroes its tangent
            z[1].mul_(d[2])                 # an in-place op on a view updates the base
            col = z.t()[1]                  # views of a dual tensor are dual
            return fw.unpack_dual(z).tangent, fw.unpack_dual(col).tangent
    _assert_same(_both(run))


def test_tangent_only_on_some_inputs_and_none_elsewhere():
    a, b, v = R.standard_normal(4), R.standard_normal(4), R.standard_normal(4)

    def run(lib, fw):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(a), lib.tensor(v))
            plain = lib.tensor(b) * 2
            return (fw.unpack_dual(d * lib.tensor(b)).tangent, fw.unpack_dual(plain).tangent)
    _assert_same(_both(run))


def test_reverse_mode_through_a_forward_mode_computation():
    # the tangent is itself differentiable: d/dx of (J v) is a Hessian-vector product
    x, v = R.standard_normal(5), R.standard_normal(5)

    def run(lib, fw):
        p = lib.tensor(x, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(p, lib.tensor(v))
            y = (d.sin() * d).sum() + (d * d).sum()
            jv = fw.unpack_dual(y).tangent
        (h,) = lib.autograd.grad(jv, p)
        return jv, h
    _assert_same(_both(run))


def test_tangents_are_dropped_when_the_level_closes():
    for lib, fw in LIBS:
        with fw.dual_level():
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            y = d * 3
            assert fw.unpack_dual(y).tangent is not None
        assert fw.unpack_dual(y).tangent is None
        assert fw.unpack_dual(d).tangent is None


def test_repr_shows_the_tangent_as_torch():
    reprs = []
    for lib, fw in LIBS:
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
            reprs.append(repr(d * 2))
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize('case', ['no_level', 'int_primal', 'int_tangent', 'size',
                                  'nested', 'exit_without_level'])
def test_errors_as_torch(case):
    def attempt(lib, fw):
        if case == 'no_level':
            fw.make_dual(lib.ones(3), lib.ones(3))
        elif case == 'exit_without_level':
            fw.exit_dual_level()
        else:
            with fw.dual_level():
                if case == 'int_primal':
                    fw.make_dual(lib.arange(3), lib.ones(3))
                elif case == 'int_tangent':
                    fw.make_dual(lib.ones(3), lib.arange(3))
                elif case == 'size':
                    fw.make_dual(lib.ones(3), lib.ones(4))
                else:
                    with fw.dual_level():
                        pass
    errors = []
    for lib, fw in LIBS:
        with pytest.raises(Exception) as info:
            attempt(lib, fw)
        errors.append(info.value)
    mine, theirs = errors
    assert type(mine) is type(theirs)
    assert str(mine).replace('dynagrad', 'torch') == str(theirs)


def test_unpacked_dual_tensor_is_a_named_tuple():
    with dfw.dual_level():
        d = dfw.make_dual(dynagrad.ones(2), dynagrad.zeros(2))
        u = dfw.unpack_dual(d)
        assert type(u).__name__ == 'UnpackedDualTensor'
        assert u.primal is u[0] and u.tangent is u[1]
        assert u.primal is not d and dfw.unpack_dual(u.primal).tangent is None
        assert np.shares_memory(u.primal.numpy(), d.numpy()) and not d.requires_grad


def test_no_cost_when_no_level_is_open():
    # the mechanism's hook is a flag that is False outside a level
    assert dfw.state.propagate is False
    with dfw.dual_level():
        assert dfw.state.propagate is True
    assert dfw.state.propagate is False


def test_gradcheck_checks_forward_mode_too():
    x = dynagrad.tensor(R.standard_normal((2, 3)), requires_grad=True)
    w = dynagrad.tensor(R.standard_normal((3, 2)), requires_grad=True)
    f = lambda a, b: (a @ b).sigmoid() * a.sum()  # noqa: E731
    assert dynagrad.autograd.gradcheck(f, (x, w), check_forward_ad=True)

    # an op whose forward-mode rule is wrong is caught: a linear flag on a nonlinear op
    from dynagrad.ops.unary import Exp
    bad = type('BadExp', (Exp,), {'linear': True, 'jvp': None})
    assert not dynagrad.autograd.gradcheck(lambda a: bad.apply(a), (x,), check_forward_ad=True,
                                           raise_exception=False)
