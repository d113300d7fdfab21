"""Activation checkpointing: trade compute for memory by re-running a segment in backward.

``checkpoint(fn, *args)`` runs ``fn`` without recording, so none of its intermediate
tensors is kept; backward runs it again, with recording, from the saved inputs (and the
random state of the first run, so dropout draws the same masks), then backpropagates
through that fresh graph.
"""
from ..autograd import Function
from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor

__all__ = ['checkpoint', 'checkpoint_sequential']


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, kwargs, *args):
        from ..ops.random import all_rng_states
        ctx.run_function = run_function
        ctx.kwargs = kwargs
        # every device's generator, as PyTorch stashes the CUDA one of the inputs' devices
        ctx.rng_state = all_rng_states() if preserve_rng_state else None
        ctx.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        return run_function(*args, **kwargs)

    @staticmethod
    def backward(ctx, *grads):
        from .. import autograd
        from ..ops.random import fork_rng, set_all_rng_states
        saved = ctx.saved_tensors
        args = list(ctx.others)
        inputs = []
        for slot, t in zip(ctx.tensor_slots, saved):
            x = t.detach()
            x.requires_grad_(t.requires_grad)
            args[slot] = x
            inputs.append(x)
        with fork_rng(enabled=ctx.rng_state is not None):
            if ctx.rng_state is not None:
                set_all_rng_states(ctx.rng_state)
            with enable_grad():
                outputs = ctx.run_function(*args, **ctx.kwargs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            # As PyTorch's reentrant checkpoint: an ordinary backward through the fresh graph,
            # so parameters the function uses (not passed as inputs) get their gradients too.
            autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        result = [None] * len(args)
        for slot, x in zip(ctx.tensor_slots, inputs):
            result[slot] = x.grad
        return (None, None, None) + tuple(result)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check='default',
               debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, its activations recomputed in backward, not stored."""
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        import warnings
        warnings.warn('None of the inputs have requires_grad=True. Gradients will be None',
                      stacklevel=2)
    return _Checkpoint.apply(function, preserve_rng_state, kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Split ``functions`` (a Sequential or a list) into ``segments`` checkpointed runs."""
    functions = list(functions.children()) if hasattr(functions, 'children') else list(functions)
    size = max(1, -(-len(functions) // segments))

    def run(start, end):
        def forward(x):
            for f in functions[start:end]:
                x = f(x)
            return x
        return forward
    for start in range(0, len(functions), size):
        input = checkpoint(run(start, start + size), input, **kwargs)
    return input
