"""dynagrad.random: PyTorch's torch.random (seeding and RNG state); the samplers are in ops."""
from .ops.random import (Generator, default_generator, manual_seed, initial_seed, seed,  # noqa
                         get_rng_state, set_rng_state, fork_rng)

__all__ = ['Generator', 'default_generator', 'manual_seed', 'initial_seed', 'seed',
           'get_rng_state', 'set_rng_state', 'fork_rng']
