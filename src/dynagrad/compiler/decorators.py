"""``torch.compiler``'s markers and switches, for the code that libraries decorate or branch
with (``@torch.compiler.disable``, ``if torch.compiler.is_compiling():``).

dynagrad's compile never traces Python: it records the ops an ordinary eager call runs
(capture.py). So no user code ever runs "while compiling" (``is_compiling()`` is False, as
it is for PyTorch code run eagerly), a function excluded from compilation needs no wrapper
(``disable`` returns it), and a function allowed in the graph or assumed constant is simply
run and recorded like any other. The stance switches what compiled callables do.
"""
import functools

__all__ = ['is_compiling', 'is_dynamo_compiling', 'is_exporting', 'disable', 'allow_in_graph',
           'assume_constant_result', 'substitute_in_graph', 'set_stance', 'list_backends',
           'get_default_backend', 'cudagraph_mark_step_begin', 'nested_compile_region',
           'current_stance']

DONE = ('default', 'force_eager')
# PyTorch's other stances, which need recompilation events dynagrad's cache does not raise
NOT_DONE = ('eager_on_recompile', 'fail_on_recompile', 'eager_then_compile',
            'aot_eager_then_compile')


class _Stance:
    """What ``set_stance`` chose; compiled callables read ``eager`` on every call."""
    __slots__ = ('name', 'eager')

    def __init__(self):
        self.name, self.eager = 'default', False


current_stance = _Stance()


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def _marker(fn, what):
    if fn is None:
        return lambda f: _marker(f, what)
    if not callable(fn):
        raise AssertionError(f'{what} expects a callable')
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` itself: dynagrad's compile records only ops, so nothing in ``fn`` is traced."""
    if fn is None:
        return lambda f: disable(f, recursive, reason=reason)
    return fn


def allow_in_graph(fn):
    return _marker(fn, 'allow_in_graph')


def assume_constant_result(fn):
    return _marker(fn, 'assume_constant_result')


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """A decorator that keeps ``original_fn`` (a capture records what it runs, whatever
    Python implements it)."""
    def register(fn):
        return original_fn
    return register


def nested_compile_region(fn=None, options=None):
    return _marker(fn, 'nested_compile_region')


def list_backends(exclude_tags=('debug', 'experimental')):
    """The backends ``dynagrad.compile`` takes that PyTorch lists here (its own replay serves
    'inductor'; 'eager' and 'aot_eager' are debug backends PyTorch leaves out)."""
    return ['inductor']


def get_default_backend():
    return 'inductor'


def cudagraph_mark_step_begin():
    """Nothing to mark: no CUDA graphs are recorded."""


class set_stance:
    """``set_stance('force_eager')`` makes compiled callables run their function eagerly,
    ``'default'`` compiles again; as a call it sets the stance, as a context manager or
    decorator it sets it for the block and restores the one before."""

    def __init__(self, stance='default', *, skip_guard_eval_unsafe=False, force_backend=None):
        if stance not in DONE:
            if stance in NOT_DONE:
                raise NotImplementedError(
                    f'dynagrad.compiler.set_stance: the {stance!r} stance is not implemented '
                    f'(dynagrad has {", ".join(map(repr, DONE))})')
            raise RuntimeError(f'invalid torch.compile stance {stance!r}')
        if force_backend is not None and stance != 'default':
            raise RuntimeError('non-default stance cannot have force_backend set')
        self.previous = (current_stance.name, current_stance.eager)
        _set(stance)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self.previous[0])

    def __call__(self, fn):
        chosen = current_stance.name
        _set(self.previous[0])   # the decorator form changes nothing until fn runs

        @functools.wraps(fn)
        def run(*args, **kwargs):
            before = current_stance.name
            _set(chosen)
            try:
                return fn(*args, **kwargs)
            finally:
                _set(before)
        return run


def _set(name):
    current_stance.name, current_stance.eager = name, name == 'force_eager'
