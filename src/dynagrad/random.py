"""dynagrad.random: PyTorch's torch.random (seeding and RNG state); the samplers are in ops."""
from .ops.random import (Generator, default_generator, manual_seed, initial_seed, seed,  # noqa
                         get_rng_state, set_rng_state, fork_rng)

__all__ = ['Generator', 'default_generator', 'manual_seed', 'initial_seed', 'seed',
           'get_rng_state', 'set_rng_state', 'fork_rng', 'thread_safe_generator']


def thread_safe_generator():
    """The generator for random draws in a DataLoader worker thread, or ``None`` (the global
    default generator) in the main process and in process workers, as in PyTorch.

    dynagrad's DataLoader runs its workers as processes, never threads, so this is always
    ``None``; it is here so that transforms written for PyTorch run unchanged."""
    return None
