"""In-place ops: version counters, leaf protection, history rewriting (also through views)."""
import numpy as np
import pytest
import torch

import dynagrad as dg


def both(values, requires_grad=True):
    return (dg.tensor(values, dtype=dg.float64, requires_grad=requires_grad),
            torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad))


def test_version_counter_bumps_and_is_shared_by_views_and_detach():
    x = dg.zeros(4)
    v = x[1:3]
    d = x.detach()
    assert x._version == 0
    x.add_(1)
    assert x._version == v._version == d._version == 1
    v.mul_(2)
    assert x._version == 2
    x[0] = 5.0
    assert x._version == d._version == 3
    np.testing.assert_allclose(x.numpy(), [5, 2, 2, 1])
    assert x.data._version == 0  # .data does not share the counter, as in PyTorch


def test_modified_saved_tensor_error_message():
    a = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.sigmoid()
    z = y * 2
    out = y.sigmoid()  # saves y's output? no: Sigmoid saves its own output
    y.add_(1)  # y is saved by the second sigmoid? It is the input of out's node
    with pytest.raises(RuntimeError) as info:
        z.sum().backward(retain_graph=True)
        out.sum().backward()
    msg = str(info.value)
    assert 'one of the variables needed for gradient computation has been modified by an ' \
           'inplace operation: [dynagrad.FloatTensor [3]], which is output 0 of ' \
           'SigmoidBackward0, is at version 1; expected version 0 instead' in msg


def test_exact_pytorch_text_for_saved_output():
    a = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = a.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r'modified by an inplace operation: '
                                           r'\[dynagrad.FloatTensor \[3\]\], which is output 0 '
                                           r'of SigmoidBackward0, is at version 1; expected '
                                           r'version 0 instead'):
        y.sum().backward()
    ta = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ty = ta.sigmoid()
    ty.mul_(2)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        ty.sum().backward()


def test_inplace_on_unsaved_tensor_is_fine():
    x, tx = both([1.0, 2.0])
    z, tz = x * 1, tx * 1
    y, ty = dg.tensor([3.0, 4.0], dtype=dg.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)
    q, tq = z + y, tz + ty  # Add saves nothing
    z.add_(2)
    tz.add_(2)
    q.sum().backward()
    tq.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_leaf_inplace_raises_before_mutating():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match='a leaf Variable that requires grad is being used in '
                                           'an in-place operation.'):
        x.add_(1)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0])
    assert x._version == 0
    with pytest.raises(RuntimeError, match='a view of a leaf Variable that requires grad is '
                                           'being used in an in-place operation.'):
        x[0:1].mul_(2)
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0])
    with pytest.raises(RuntimeError, match='leaf Variable'):
        x[0] = 3.0
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 2.0])


def test_leaf_inplace_allowed_under_no_grad():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    with dg.no_grad():
        x.mul_(2)
        x[0] = 7.0
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_allclose(x.detach().numpy(), [7.0, 4.0])
    assert x._version == 2


@pytest.mark.parametrize('op', ['add_', 'sub_', 'mul_', 'div_'])
def test_inplace_on_non_leaf_rewrites_history(op):
    x, tx = both([1.0, 2.0, 3.0])
    w, tw = both([0.5, -1.0, 2.0])
    y, ty = x * 2, tx * 2
    getattr(y, op)(w)
    getattr(ty, op)(tw)
    assert y.grad_fn.name() == ty.grad_fn.name()
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


def test_inplace_on_view_of_non_leaf_flows_to_base_and_values():
    x, tx = both([1.0, 2.0, 3.0, 4.0])
    w, tw = both([5.0, 6.0])
    y, ty = x * 1, tx * 1
    y[1:3].mul_(w)
    ty[1:3].mul_(tw)
    assert y.grad_fn.name() == 'CopySlices' and ty.grad_fn.name().endswith('CopySlices')
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


def test_view_of_rewritten_base_sees_new_history():
    x, tx = both([1.0, 2.0, 3.0, 4.0])
    y, ty = x * 1, tx * 1
    v, tv = y[1:3], ty[1:3]
    v.mul_(3)
    tv.mul_(3)
    (v.sum() * 2).backward()
    (tv.sum() * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


def test_setitem_with_mask_and_with_tensor_values():
    x, tx = both([1.0, -2.0, 3.0, -4.0])
    v, tv = both([10.0, 20.0])
    y, ty = x * 2, tx * 2
    y[y < 0] = v
    ty[ty < 0] = tv
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy())


def test_setitem_turns_a_plain_tensor_into_a_non_leaf():
    x = dg.zeros(3)
    y, ty = both([2.0])
    tx = torch.zeros(3, dtype=torch.float64)
    x = x.double()
    x[0] = y[0]
    tx[0] = ty[0]
    assert not x.is_leaf and x.requires_grad and x.grad_fn is not None
    (x * 3).sum().backward()
    (tx * 3).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())


def test_setitem_on_view_of_non_leaf():
    x, tx = both([[1.0, 2.0], [3.0, 4.0]])
    y, ty = x * 2, tx * 2
    y[0][1] = 0.0
    ty[0][1] = 0.0
    (y * x).sum().backward()
    (ty * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    # Writing into a view of a saved output is caught, as in PyTorch.
    e, te = x.exp(), tx.exp()
    e[0][1] = 0.0
    te[0][1] = 0.0
    with pytest.raises(RuntimeError, match='which is output 0 of ExpBackward0'):
        e.sum().backward()
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        te.sum().backward()


def test_iadd_and_friends_are_inplace():
    x = dg.tensor([1.0, 2.0])
    ident = id(x)
    x += 1
    x -= 0.5
    x *= 2
    x /= 4
    assert id(x) == ident and x._version == 4
    np.testing.assert_allclose(x.numpy(), [0.75, 1.25])


def test_inplace_result_type_and_shape_errors():
    i = dg.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        i.add_(1.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        torch.tensor([1, 2]).add_(1.5)
    x = dg.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        x.add_(dg.ones(2, 3))
    assert x._version == 0


def test_zero_fill_copy_clamp_inplace_gradients():
    x, tx = both([1.0, -2.0, 3.0])
    s, ts = both([7.0, 8.0, 9.0])
    y, ty = x * 1, tx * 1
    y.clamp_(-1, 2)
    ty.clamp_(-1, 2)
    z, tz = x * 1, tx * 1
    z.copy_(s)
    tz.copy_(ts)
    q, tq = x * 1, tx * 1
    q.zero_()
    tq.zero_()
    r, tr = x * 1, tx * 1
    r.fill_(2.0)
    tr.fill_(2.0)
    ((y + z + q + r) * x).sum().backward()
    ((ty + tz + tq + tr) * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy())


def test_exp_inplace_saves_output_and_detects_later_change():
    x, tx = both([0.5, 1.0])
    y, ty = x * 1, tx * 1
    y.exp_()
    ty.exp_()
    (y * 2).sum().backward(retain_graph=True)
    (ty * 2).sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    y.add_(1)
    with pytest.raises(RuntimeError, match='modified by an inplace operation'):
        y.sum().backward()
