"""Anomaly detection and the errors that point at their cause."""
import sys

import numpy as np
import pytest

import dynagrad as dg
from dynagrad.autograd import detect_anomaly, set_detect_anomaly, is_anomaly_enabled

pytestmark = pytest.mark.filterwarnings('ignore:Anomaly Detection has been enabled')


def _line():
    return sys._getframe(1).f_lineno


def test_log_of_negative_names_the_node_and_this_line():
    x = dg.tensor([-1.0, 2.0], requires_grad=True)
    with detect_anomaly():
        y = x.log(); line = _line()  # noqa: E702
        with pytest.raises(RuntimeError) as info:
            (y * 2).sum().backward()
    message = str(info.value)
    assert 'LogBackward0' in message
    assert f'{__file__}", line {line}' in message


def test_nan_gradient_and_exception_in_backward_name_the_node():
    x = dg.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = (x * 0).sqrt(); line = _line()  # noqa: E702   (sqrt(0): infinite slope)
        with pytest.raises(RuntimeError, match=r"Function 'SqrtBackward0' returned inf values "
                                               r'in its 0th output') as info:
            y.sum().backward()
    assert f'line {line}' in str(info.value)

    class Boom(dg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError('boom')
    with detect_anomaly():
        out = Boom.apply(dg.ones(1, requires_grad=True)); line = _line()  # noqa: E702
        with pytest.raises(ValueError, match='boom') as info:
            out.sum().backward()
    assert 'Error detected in BoomBackward' in str(info.value)
    assert f'line {line}' in str(info.value)


def test_anomaly_is_off_by_default_and_captures_nothing_then():
    assert not is_anomaly_enabled()
    x = dg.ones(2, requires_grad=True)
    y = x.exp()
    assert y.grad_fn._trace is None
    with set_detect_anomaly(True):
        assert is_anomaly_enabled()
        assert x.exp().grad_fn._trace is not None
    assert not is_anomaly_enabled()


def test_inplace_error_names_the_op_that_wrote_and_where():
    a = dg.tensor([1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    c = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    message = str(info.value)
    assert 'which is output 0 of SigmoidBackward0, is at version 1; expected version 0' in message
    assert 'last modified in place by the op recorded as MulBackward0' in message
    with detect_anomaly():
        b = a.sigmoid()
        c = b * b
        b.add_(1); line = _line()  # noqa: E702
        with pytest.raises(RuntimeError) as info:
            c.sum().backward()
    assert f'line {line}' in str(info.value) and 'AddBackward0' in str(info.value)


def test_backward_twice_names_the_node_and_suggests_detach():
    h = dg.zeros(3)
    w = dg.ones(3, requires_grad=True)
    h = (h + 1) * w  # a recurrent state carried into the next iteration
    h.sum().backward()
    with pytest.raises(RuntimeError, match='Specify retain_graph=True') as info:
        (h * 2).sum().backward()
    assert 'MulBackward0' in str(info.value) and 'detach()' in str(info.value)


def test_no_grad_reason_is_given():
    w = dg.ones(2, requires_grad=True)
    with dg.no_grad():
        y = (w * 2).sum()
    with pytest.raises(RuntimeError, match='grad mode was off'):
        y.backward()
    frozen = dg.ones(2)
    with pytest.raises(RuntimeError, match='None of the tensors it was computed from requires '
                                           'grad'):
        (frozen * 2).sum().backward()


def test_shape_errors_name_the_op_and_both_shapes():
    with pytest.raises(RuntimeError, match=r'add: shapes \[2, 3\] and \[4\]'):
        dg.ones(2, 3) + dg.ones(4)
    with pytest.raises(RuntimeError, match=r'mat1 and mat2 shapes cannot be multiplied '
                                           r'\(2x3 and 4x5\)'):
        dg.ones(2, 3) @ dg.ones(4, 5)
