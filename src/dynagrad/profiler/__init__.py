"""``dynagrad.profiler``: the names of ``torch.profiler`` that training libraries build
their configuration from (accelerate annotates with ``ProfilerActivity`` at import time).

``schedule`` and the enums are PyTorch's; ``record_function`` labels a region (nothing
records it: dynagrad has no profiler, and PyTorch's labels cost nothing without one either).
``profile`` says so when made; time a dynagrad program with Python's ``cProfile`` instead.
"""
import enum
import functools
import warnings

__all__ = ['profile', 'schedule', 'supported_activities', 'tensorboard_trace_handler',
           'ProfilerAction', 'ProfilerActivity', 'kineto_available', 'record_function']

NO_PROFILER = ('dynagrad has no profiler: time the program with cProfile '
               '(python -m cProfile -s cumtime script.py) instead')


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def supported_activities():
    return {ProfilerActivity.CPU}


def kineto_available():
    return False


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """``step -> ProfilerAction``: skip ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recording steps (the last one saves), ``repeat`` times (0:
    forever); ``skip_first_wait`` drops the first cycle's wait."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(
            f'Invalid profiler schedule arguments. Got wait={wait} (need >= 0), '
            f'warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} '
            f'(need >= 0), skip_first={skip_first} (need >= 0).')
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f'step must be >= 0, got {step}')
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


class record_function:
    """``with record_function('name'):`` (or as a decorator) labels a region of a profile."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def labelled(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return labelled


class profile:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(NO_PROFILER)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    raise NotImplementedError(NO_PROFILER)
