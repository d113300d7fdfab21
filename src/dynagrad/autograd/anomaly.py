"""Anomaly detection: where did this NaN, this failing backward, this in-place write come from?

While on, every recorded node keeps the Python stack of the forward call that created it,
and the backward engine checks each node: an exception it raises, or a NaN/inf it produces
(or, for a node whose forward turned finite inputs into NaN/inf, the moment its gradient
arrives), becomes an error whose message names the node and shows that forward stack.
Off by default: capturing stacks costs time; when off, nothing is captured.
"""
import os
import traceback
import warnings

from .._dtype import is_floating
from ..backend import xp

__all__ = ['detect_anomaly', 'set_detect_anomaly', 'is_anomaly_enabled',
           'is_anomaly_check_nan_enabled']


class _State:
    enabled = False
    check_nan = True


state = _State()


def is_anomaly_enabled():
    return state.enabled


def is_anomaly_check_nan_enabled():
    return state.check_nan


def _warn():
    warnings.warn('Anomaly Detection has been enabled. This mode will increase the runtime '
                  'and should only be enabled for debugging.', stacklevel=3)


class detect_anomaly:
    """Context manager and decorator that turns anomaly detection on (``check_nan``: also
    treat NaN/inf gradients as errors)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        _warn()

    def __enter__(self):
        self.prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self.prev
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (state.enabled, state.check_nan)
        state.enabled, state.check_nan = bool(mode), check_nan
        if mode:
            _warn()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        state.enabled, state.check_nan = self.prev
        return False


# -- used by the mechanism and the engine, only while detection is on ---------------------

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def capture_stack():
    """The forward call's stack: the caller's frames, without dynagrad's own."""
    frames = traceback.extract_stack()[:-1]
    kept = [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE)]
    return ''.join(traceback.format_list(kept))


def describe(node):
    trace = node._trace
    if trace is None:
        return (f'\n\nError detected in {node.name()}. (It was created while anomaly '
                'detection was off: no forward traceback was recorded.)')
    return (f'\n\nError detected in {node.name()}. Traceback of the forward call that '
            f'created it:\n{trace}')


def note_forward(node, arrays, result):
    """Record the forward stack; mark a node whose forward made NaN/inf out of finite values."""
    node._trace = capture_stack()
    if state.check_nan and is_floating(result.dtype) and not xp.isfinite(result).all():
        if all(not (getattr(a, 'dtype', None) is not None and is_floating(a.dtype)
                    and not xp.isfinite(a).all()) for a in arrays):
            node._forward_nonfinite = True


def _nonfinite(g):
    data = getattr(g, '_data', g)
    return data is not None and is_floating(data.dtype) and not xp.isfinite(data).all()


def run_checked(node, grads_out, create_graph):
    """Run one node's backward the way anomaly mode wants it."""
    if state.check_nan and getattr(node, '_forward_nonfinite', False):
        raise RuntimeError(f"Function '{node.name()}' produced nan/inf values in its forward "
                           'output from finite inputs, and a gradient flows through it.'
                           + describe(node))
    try:
        grads_in = node._run_backward(grads_out, create_graph)
    except Exception as error:
        message = f'{error}{describe(node)}'
        try:
            new = type(error)(message)
        except Exception:  # an exception type that takes other arguments
            new = RuntimeError(message)
        raise new from error
    if state.check_nan:
        for i, g in enumerate(grads_in):
            if g is not None and _nonfinite(g):
                data = getattr(g, '_data', g)
                kind = 'nan' if xp.isnan(data).any() else 'inf'
                raise RuntimeError(f"Function '{node.name()}' returned {kind} values in its "
                                   f'{i}th output.' + describe(node))
    return grads_in
