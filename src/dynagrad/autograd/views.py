"""Writes through views: the history a base gets when one of its views is written in place.

PyTorch calls the node ``CopySlices``: the base's gradient is the incoming one, except in
the view's region, where it is what the in-place op's backward gives for the view's old
value. A view remembers how it was taken from its base (``_view_fn``: the view ops with
their parameters), so the region can be taken again of a gradient, array or tensor.
"""
from .function import Op, _edge, is_array
from .graph import NO_EDGE
from .inplace import write_region

__all__ = ['CopySlices', 'ViewScatter', 'replay_view', 'view_of_array']


def replay_view(base, chain):
    """Re-derive a view from its base by re-running the view ops (recorded, on tensors)."""
    v = base
    for cls, params, index in chain:
        v = cls.apply(v, **params)
        if index is not None:
            v = v[index]
    return v


def view_of_array(array, chain):
    """The same view, taken of a plain array (a NumPy view, so writes go through)."""
    for cls, params, index in chain:
        array = Op.__new__(cls).forward(array, **params)
        if index is not None:
            array = array[index]
    return array


class CopySlices(Op):
    """The history of a base after an in-place op on one of its views.

    The gradient of the base is the incoming gradient, except in the view's region,
    where it is what the in-place op's backward gives for the view's old value.
    """
    node_name = 'CopySlices'

    @classmethod
    def _make(cls, base, chain, inner):
        node = Op.__new__(cls)
        node._saved = ()
        node.chain = chain
        node.inner = inner
        base_edge = _edge(base) if base._requires_grad else NO_EDGE
        node.next_functions = (base_edge,) + tuple(inner.next_functions[1:])
        return node

    def backward(self, g):
        if is_array(g):
            g_base = g.copy()
            region = view_of_array(g_base, self.chain)
            grads = self.inner._run_backward((region.copy(),), False)
            write_region(region, 0 if grads[0] is None else grads[0])
            return (g_base,) + tuple(grads[1:])
        region = replay_view(g, self.chain)
        grads = self.inner._run_backward((region,), True)
        inner_grad = grads[0] if grads[0] is not None else region * 0
        return (ViewScatter.apply(g, inner_grad, chain=self.chain),) + tuple(grads[1:])

    def _release_saved(self):
        self.inner._release_saved()


class ViewScatter(Op):
    """``base`` with the region of a view replaced by ``values`` (CopySlices' double backward)."""

    def forward(self, base, values, chain):
        self.chain = chain
        out = base.copy()
        write_region(view_of_array(out, self.chain), values)
        return out

    def backward(self, g):
        if is_array(g):
            g_base = g.copy()
            write_region(view_of_array(g_base, self.chain), 0)
            return g_base, view_of_array(g, self.chain)
        zeros = replay_view(g, self.chain) * 0
        return ViewScatter.apply(g, zeros, chain=self.chain), replay_view(g, self.chain)
