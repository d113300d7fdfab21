"""``dynagrad.mps``: what ``torch.mps`` answers without Apple's Metal backend.

dynagrad has no MPS backend: ``is_available()`` is False, ``device_count()`` 0,
``manual_seed`` is accepted and does nothing, and the rest raises PyTorch's
``RuntimeError: Cannot execute ...() without MPS backend.``
"""
__all__ = ['is_available', 'device_count', 'manual_seed', 'seed', 'get_rng_state',
           'set_rng_state', 'synchronize', 'empty_cache', 'set_per_process_memory_fraction',
           'current_allocated_memory', 'driver_allocated_memory', 'recommended_max_memory']


def is_available():
    return False


def device_count():
    return 0


def manual_seed(seed):
    """Accepted and ignored, as PyTorch does without MPS."""


def _without_mps(native_name):
    def fail(*args, **kwargs):
        raise RuntimeError(f'Cannot execute {native_name}() without MPS backend.')
    return fail


seed = _without_mps('getDefaultGenerator')
get_rng_state = _without_mps('getDefaultGenerator')
set_rng_state = _without_mps('getDefaultGenerator')
synchronize = _without_mps('deviceSynchronize')
empty_cache = _without_mps('emptyCache')
set_per_process_memory_fraction = _without_mps('setMemoryFraction')
current_allocated_memory = _without_mps('getCurrentAllocatedMemory')
driver_allocated_memory = _without_mps('getDriverAllocatedMemory')
recommended_max_memory = _without_mps('getRecommendedMaxMemory')
