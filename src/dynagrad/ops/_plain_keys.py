"""Everyday slicing keys (``idx[:, -64:]``, ``logits[:, -1, :]``, ``mask[:, :, :L, :L]``),
told apart from the rest cheaply: ``x[key]`` runs once per token in a sampling loop, and
reading such a key the general way (normalising every item, then checking it) cost more
than taking the view itself."""


def plain_key(items, shape):
    """None unless every item of the key is a Python int, None, Ellipsis or a slice of
    Python ints (or None) with a positive step: keys torch reads as NumPy does, needing no
    normalising. Then True, or False where the key may still be refused (too many indices,
    an int out of range, or an Ellipsis moving the dims): the caller checks it in full."""
    for k in items:
        c = k.__class__
        if c is slice:
            start, stop, step = k.start, k.stop, k.step
            if not ((start is None or start.__class__ is int)
                    and (stop is None or stop.__class__ is int)
                    and (step is None or step.__class__ is int and step > 0)):
                return None
        elif c is not int and k is not None and k is not Ellipsis:
            return None     # bool, NumPy integers, tensors, lists, arrays: the full reading
    dim = 0
    for k in items:
        if k is None:
            continue
        if k is Ellipsis or dim == len(shape) or k.__class__ is int and not (
                -shape[dim] <= k < shape[dim]):
            return False
        dim += 1
    return True
