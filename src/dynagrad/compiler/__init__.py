"""dynagrad.compiler: ``dynagrad.compile`` (torch.compile's API), ``explain`` and
``show_code``, and ``torch.compiler``'s markers and switches (decorators.py).

Capture records the ops one eager call runs (capture.py); replay runs them again as a flat
program over arrays, forward and backward, with no Tensor or graph node per op
(program.py); guards decide when a program may be reused (api.py).
"""
from .api import CompiledFunction, OptimizedModule, compile
from .capture import GraphBreak
from .decorators import (allow_in_graph, assume_constant_result, cudagraph_mark_step_begin,
                         disable, get_default_backend, is_compiling, is_dynamo_compiling,
                         is_exporting, list_backends, nested_compile_region, set_stance,
                         substitute_in_graph)

__all__ = ['compile', 'explain', 'show_code', 'reset', 'CompiledFunction', 'OptimizedModule',
           'GraphBreak', 'allow_in_graph', 'assume_constant_result', 'cudagraph_mark_step_begin',
           'disable', 'get_default_backend', 'is_compiling', 'is_dynamo_compiling',
           'is_exporting', 'list_backends', 'nested_compile_region', 'set_stance',
           'substitute_in_graph']


def _compiled_of(fn):
    if isinstance(fn, OptimizedModule):
        return fn.__dict__['_compiled']
    if isinstance(fn, CompiledFunction):
        return fn
    return None


class ExplainOutput:
    """What ``explain`` found: ``graph_count``, ``graph_break_count``, ``break_reasons``,
    ``op_count``, and the programs' code."""

    def __init__(self, compiled):
        programs = compiled.programs()
        self.graph_count = len(programs)
        self.break_reasons = [what[len('graph break: '):] for _, what in compiled.events
                              if what.startswith('graph break: ')]
        self.graph_break_count = len(self.break_reasons)
        self.op_count = sum(len(p.steps) for p in programs)
        self.events = [what for _, what in compiled.events]
        self.code = [p.code() for p in programs]

    def __str__(self):
        lines = [f'Graph Count: {self.graph_count}',
                 f'Graph Break Count: {self.graph_break_count}',
                 f'Op Count: {self.op_count}']
        if self.break_reasons:
            lines.append('Break Reasons:')
            lines += [f'  Break Reason {i + 1}: {r}' for i, r in enumerate(self.break_reasons)]
        lines.append('Events:')
        lines += [f'  {e}' for e in self.events]
        return '\n'.join(lines)

    __repr__ = __str__


def explain(fn, *args, **kwargs):
    """Compile ``fn`` (unless it is compiled already), call it three times on the arguments
    (two captures and a replay, as in training) and say what was captured and why anything
    was not: the counterpart of ``torch._dynamo.explain``."""
    compiled = _compiled_of(fn)
    if compiled is None:
        compiled = _compiled_of(compile(fn))
    for _ in range(3):
        compiled(*args, **kwargs)
    return ExplainOutput(compiled)


def show_code(fn):
    """Print (and return) the straight-line code of ``fn``'s compiled programs."""
    compiled = _compiled_of(fn)
    if compiled is None:
        raise RuntimeError('show_code: pass what dynagrad.compile returned (and call it first: '
                           'programs are made by calls)')
    text = '\n\n'.join(p.code() for p in compiled.programs()) or \
        '(no program yet: a call is captured twice before it compiles)'
    print(text)
    return text


def reset():
    """Nothing process-wide to clear: each compiled callable keeps its own cache (use its
    ``reset()``); here for torch.compiler.reset's callers."""
