"""The legacy 0.3 ``Variable``: a Tensor subclass with 0.3's volatile semantics and print form."""
import numpy as np
import pytest

import dynagrad
from dynagrad import Tensor
from dynagrad.autograd import Variable


@pytest.fixture(autouse=True)
def _reset_printoptions():
    dynagrad.set_printoptions(profile='default')
    yield
    dynagrad.set_printoptions(profile='default')


def V(values, **kw):
    return Variable(dynagrad.FloatTensor(values), **kw)


# -- construction -----------------------------------------------------------------------

def test_variable_is_a_tensor_subclass():
    v = V([1, 2])
    assert issubclass(Variable, Tensor)
    assert isinstance(v, Tensor) and type(v) is Variable
    assert v.requires_grad is False and v.volatile is False
    assert v.is_leaf and v.grad_fn is None and v.grad is None


def test_constructor_flags_and_defaults():
    assert V([1.0], requires_grad=True).requires_grad
    v = V([1.0], volatile=True)
    assert v.volatile and not v.requires_grad


def test_constructor_shares_memory_with_wrapped_tensor():
    t = dynagrad.FloatTensor([1, 2, 3])
    v = Variable(t)
    t[0] = 10
    assert v.tolist() == [10, 2, 3]


def test_constructor_rejects_non_tensor():
    with pytest.raises(TypeError, match='Variable data has to be a tensor, but got list'):
        Variable([1, 2])


def test_volatile_and_requires_grad_together_raise():
    with pytest.raises(RuntimeError,
                       match="Variable can't be volatile and require_grad at the same time!"):
        V([1.0], requires_grad=True, volatile=True)
    v = V([1.0], volatile=True)
    with pytest.raises(RuntimeError, match="can't be volatile and require_grad"):
        v.requires_grad_(True)
    w = V([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="can't be volatile and require_grad"):
        w.volatile = True


def test_volatile_only_settable_on_leaves():
    x = V([1.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match='volatile can only be set on leaf variables'):
        y.volatile = True
    leaf = V([1.0])
    leaf.volatile = True
    assert leaf.volatile and (leaf + 1).volatile


def test_volatile_readable_on_plain_tensors():
    t = dynagrad.ones(2, requires_grad=True)
    assert t.volatile is False
    assert (t * 2).volatile is False
    assert dynagrad.tensor(1.0).volatile is False


# -- results of ops ---------------------------------------------------------------------

def test_ops_on_variables_return_variables():
    a, b = V([1, 2], requires_grad=True), V([3, 4])
    for r in (a + b, a * b, a - 1, 2 * a, a / b, a ** 2, -a, a.exp(), a.sum(), a.mean(),
              a.view(2, 1), a[0], a.unsqueeze(0), dynagrad.matmul(a, b)):
        assert type(r) is Variable, r


def test_ops_mixing_variables_and_plain_tensors_return_variables():
    v, t = V([1, 2]), dynagrad.tensor([3.0, 4.0])
    assert type(v + t) is Variable and type(t + v) is Variable
    assert type(t * v) is Variable and type(dynagrad.add(t, v)) is Variable
    assert type(t + t) is Tensor


def test_requires_grad_propagates_as_or():
    a, b = V([1.0], requires_grad=True), V([2.0])
    assert (a + b).requires_grad and not (b + b).requires_grad
    assert (a * b).grad_fn is not None and (b * b).grad_fn is None


# -- .data -----------------------------------------------------------------------------

def test_data_is_plain_tensor_sharing_memory():
    v = V([[1, 2], [3, 4]], requires_grad=True)
    d = v.data
    assert type(d) is Tensor and not d.requires_grad and d.grad_fn is None
    d[0, 0] = 9
    assert v.tolist()[0][0] == 9
    assert np.shares_memory(v.data.numpy(), v.detach().numpy())
    assert v.data.numpy().tolist() == [[9, 2], [3, 4]]


def test_data_setter_replaces_values():
    v = V([1, 2])
    v.data = dynagrad.FloatTensor([5, 6])
    assert v.tolist() == [5, 6]


# -- volatile ----------------------------------------------------------------------------

VOLATILE_OPS = [
    ('add', lambda a, b: a + b), ('radd_scalar', lambda a, b: 1 + a),
    ('mul', lambda a, b: a * b), ('sub', lambda a, b: b - a), ('div', lambda a, b: a / b),
    ('pow', lambda a, b: a ** 2), ('neg', lambda a, b: -a), ('exp', lambda a, b: a.exp()),
    ('tanh', lambda a, b: a.tanh()), ('relu', lambda a, b: a.relu()),
    ('sum', lambda a, b: a.sum()), ('mean_dim', lambda a, b: a.mean(dim=0)),
    ('view', lambda a, b: a.view(4)), ('transpose', lambda a, b: a.t()),
    ('index', lambda a, b: a[0]), ('matmul', lambda a, b: a @ b),
    ('clone', lambda a, b: a.clone()), ('detach', lambda a, b: a.detach()),
]


@pytest.mark.parametrize('name,fn', VOLATILE_OPS, ids=[n for n, _ in VOLATILE_OPS])
@pytest.mark.parametrize('which', ['first', 'second'])
def test_volatile_propagates_through_every_op(name, fn, which):
    req = V([[1, 2], [3, 4]], requires_grad=True)
    vol = V([[1, 1], [2, 2]], volatile=True)
    a, b = (vol, req) if which == 'first' else (req, vol)
    if name in ('radd_scalar', 'pow', 'neg', 'exp', 'tanh', 'relu', 'sum', 'mean_dim', 'view',
                'transpose', 'index', 'clone', 'detach') and which == 'second':
        a = vol  # unary ops: the volatile input must be the operand
    r = fn(a, b)
    assert type(r) is Variable
    assert r.volatile is True
    assert r.requires_grad is False
    assert r.grad_fn is None


def test_volatile_outranks_requires_grad_reference_case():
    # 0.3 test_volatile: z requires grad, y volatile, w = z + y
    x = V([[1.0, 1.0], [1.0, 1.0]], requires_grad=True)
    y = V([[4.0, 4.0], [4.0, 4.0]], volatile=True)
    z = x ** 2
    w = z + y
    assert z.requires_grad and not z.volatile
    assert w.volatile and not w.requires_grad and w.grad_fn is None
    # ... and everything downstream of w is volatile too
    u = (w * x).sum()
    assert u.volatile and not u.requires_grad and u.grad_fn is None


def test_volatile_propagates_through_plain_tensor_mix():
    v = V([1.0], volatile=True)
    t = dynagrad.tensor([2.0], requires_grad=True)
    r = t * v
    assert type(r) is Variable and r.volatile and not r.requires_grad


def test_volatile_in_place_makes_target_volatile():
    x = V([1.0, 2.0])
    y = V([5.0], volatile=True)
    x[0:1] = y
    assert x.volatile and x.tolist() == [5.0, 2.0]
    z = V([1.0, 2.0])
    z.add_(V([1.0, 1.0], volatile=True))
    assert z.volatile and z.tolist() == [2.0, 3.0]


def test_setitem_scalar_slot_with_size_one_value():
    x = dynagrad.tensor([1.0, 2.0])
    x[0] = dynagrad.tensor([5.0])  # leading size-1 dims of the value are dropped, as in torch
    assert x.tolist() == [5.0, 2.0]
    v = V([1.0, 2.0])
    v[0] = V([7.0], volatile=True)  # 0.3's test_volatile_assignment
    assert v.volatile


def test_backward_on_volatile_result_raises():
    x = V([2.0], requires_grad=True)
    y = V([3.0], volatile=True)
    z = x * y
    assert z.tolist() == [6.0]
    with pytest.raises(RuntimeError, match='element 0 of variables tuple is volatile'):
        z.backward()
    assert x.grad is None


def test_backward_on_volatile_leaf_raises():
    with pytest.raises(RuntimeError, match='volatile'):
        V([1.0], volatile=True).backward()


def test_register_hook_on_volatile_raises():
    v = V([1.0], volatile=True)
    with pytest.raises(RuntimeError, match='^cannot register a hook on a volatile variable$'):
        v.register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match='cannot register a hook on a volatile variable'):
        (v * 2).register_hook(lambda g: g)


def test_register_hook_on_non_requiring_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        V([1.0]).register_hook(lambda g: g)


def test_detach_preserves_volatility_and_shares_data():
    v = V([1.0, 2.0], volatile=True)
    d = v.detach()
    assert type(d) is Variable and d.volatile and not d.requires_grad
    r = V([1.0], requires_grad=True) * 2
    dr = r.detach()
    assert not dr.volatile and not dr.requires_grad and dr.is_leaf
    dr[0] = 7
    assert r.tolist() == [7.0]


# -- gradients ---------------------------------------------------------------------------

def test_grad_is_a_variable_and_stable():
    x = V([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    g = x.grad
    assert type(g) is Variable and g is x.grad
    assert g.tolist() == [2.0, 4.0]
    x.grad.data.zero_()
    assert x.grad.tolist() == [0.0, 0.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad_on_variable():
    x = V([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def test_register_hook_doubles_and_remove():
    v = Variable(dynagrad.Tensor([0, 0, 0]), requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)
    v.backward(dynagrad.Tensor([1, 1, 1]))
    assert v.grad.data.tolist() == [2, 2, 2]
    h.remove()
    v.backward(dynagrad.Tensor([1, 1, 1]))
    assert v.grad.data.tolist() == [3, 3, 3]


def test_backward_retain_variables_is_a_deprecated_alias():
    x = V([2.0], requires_grad=True)
    y = x * x
    with pytest.warns(DeprecationWarning, match='retain_variables option is deprecated'):
        y.backward(retain_variables=True)
    y.backward()
    assert x.grad.tolist() == [8.0]
    with pytest.raises(ValueError, match='only one of retain_graph and retain_variables'):
        (x * x).backward(retain_graph=True, retain_variables=True)


# -- reinforce ---------------------------------------------------------------------------

def test_reinforce_raises_pointing_to_distributions():
    v = V([0.5, 0.5], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        v.reinforce(dynagrad.ones(2))
    msg = str(info.value)
    assert msg.startswith('reinforce() was removed.\n')
    assert 'dynagrad.distributions' in msg
    assert 'Categorical' in msg and 'log_prob' in msg


# -- printing ----------------------------------------------------------------------------

def test_variable_repr_legacy_form():
    v = Variable(dynagrad.FloatTensor([[1, 2], [3, 4]]))
    expected = 'Variable containing:\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n'
    assert repr(v) == expected
    assert str(v) == expected
    # independent of legacy printing of plain tensors, and of requires_grad
    dynagrad.set_printoptions(legacy=True)
    assert repr(Variable(dynagrad.FloatTensor([[1, 2], [3, 4]]), requires_grad=True)) == expected


def test_variable_repr_float_values_and_other_types():
    v = V([0.5, 1.0, 4.5])
    assert repr(v) == ('Variable containing:\n 0.5000\n 1.0000\n 4.5000\n'
                       '[dynagrad.FloatTensor of size 3]\n')
    d = Variable(dynagrad.DoubleTensor([27]))
    assert repr(d) == 'Variable containing:\n 27\n[dynagrad.DoubleTensor of size 1]\n'


def test_zero_dim_variable_prints_as_size_one():
    # 0.3's mean() returned a Variable of size 1; a 0-dim Variable prints its value that way
    v = dynagrad.mean(V([[1, 2], [3, 4]]) ** 2)
    assert v.dim() == 0
    assert repr(v) == 'Variable containing:\n 7.5000\n[dynagrad.FloatTensor of size 1]\n'


def test_print_of_two_variables_matches_reference():
    # reference 2.5: print(z, out) shows '... of size 2x2]\n Variable containing:\n 27 ...'
    z = Variable(dynagrad.ones(2, 2))
    out = Variable(dynagrad.FloatTensor([27]))
    text = f'{z!s} {out!s}'
    assert text == ('Variable containing:\n 1  1\n 1  1\n[dynagrad.FloatTensor of size 2x2]\n'
                    ' Variable containing:\n 27\n[dynagrad.FloatTensor of size 1]\n')


def test_legacy_printoption_makes_plain_tensors_print_the_03_way():
    t = dynagrad.FloatTensor([[1, 2], [3, 4]])
    assert repr(t) == 'tensor([[1., 2.],\n        [3., 4.]])'
    dynagrad.set_printoptions(legacy=True)
    assert repr(t) == '\n 1  2\n 3  4\n[dynagrad.FloatTensor of size 2x2]\n'
    assert str(Variable(t).data) == repr(t)
    dynagrad.set_printoptions(legacy=False)
    assert repr(t) == 'tensor([[1., 2.],\n        [3., 4.]])'


def test_type_name():
    assert V([1]).type() == 'dynagrad.FloatTensor'
    assert Variable.__module__ == 'dynagrad.autograd.variable'


def test_detach_keeps_variable_but_not_parameter_class_in_legacy_mode():
    import dynagrad
    from dynagrad.autograd import Variable
    v = Variable(dynagrad.ones(2), requires_grad=True)      # switches 0.3 semantics on
    assert type(v.detach()) is Variable
    p = dynagrad.nn.Parameter(dynagrad.ones(2))
    assert type(p.detach()) is dynagrad.Tensor
    assert all(type(t) is dynagrad.Tensor
               for t in dynagrad.nn.Linear(2, 2).state_dict().values())
