"""Native code for a program's elementwise chains: each fused region becomes one numba
kernel forward and one backward, so a chain of elementwise ops costs one pass over memory
(and one call) instead of one NumPy ufunc per op.

A region is a run of elementwise steps (``SCALAR``, ``BY_PARAMETER``) whose outputs have
one shape and one real float dtype (float32 or float64), with Python numbers as the only
other operands. Array operands may broadcast to that shape (a bias, a (N, 1) column, a
size-1 dimension anywhere; masked_fill's mask is a bool array broadcast the same way); a
step with another output shape ends the run. Steps between the run's members that read
nothing it made or read and write nothing in place (attention's mask, computed between the
scores' scaling and their masked_fill) do not end it: they run first, and the region's
kernel is called where its last member was. Values the rest of the program reads (later steps, the
result, other gradient formulas) are written out; the others live in registers only.

Where an input broadcasts, the kernels loop over a nest of the region's dimensions, merged
where every input either runs along both or is broadcast along both (a (B, L, C) region
with a (C,) bias: two loops, B*L and C), each input read at its own index (no broadcast
copy is made). A broadcast input's gradient is summed to its shape inside the backward
kernel, into a float64 buffer, then rounded to the dtype once.

The forward kernel runs the chain per element. The backward kernel recomputes the chain
per element from the region's inputs and runs the gradient formulas back through it, so
no intermediate value is kept between forward and backward (as inductor's pointwise
recomputation does): it reads the region's inputs and the gradients of its written-out
values, and writes the gradients of its inputs, in one pass.

A whole-tensor ``sum()`` right after the run, of its last value only, joins the region:
the forward kernel keeps the values in a scratch buffer of its own and adds them up in
float64 (``native.elementwise.block_sum``: 8 interleaved partial sums) instead of handing
them out, and the backward kernel reads the sum's gradient as one number.

Arithmetic matches NumPy's: the same IEEE operations in the data's dtype (constants in
that dtype, no fast-math), the gradient terms within a region summed in the NumPy
generator's order; ``+ - * /``, neg and relu give eager's bits. Where an input also gets
gradient from outside the region, the region's terms are summed first (rounding may
differ), and a fused sum adds in another order than NumPy's pairwise sum. A broadcast
input's gradient differs from eager's by that sum's rounding only: eager rounds each
element's term to the dtype (as here), then sums them pairwise in the dtype; here they are
added in float64 in element order, so float32 results are as close to the exact sum or
closer, and float64 ones differ by a few ulps of the sum. masked_fill with a number gives
eager's bits. tanh calls ``native.elementwise.tanh`` (float32: a rational fit within an
ulp or two of NumPy's, vectorisable; float64: libm); GELU calls the GELU kernel's
per-element formulas (``native/elementwise.py``: within an ulp of eager's native GELU, a
few of its NumPy path's).

Recomputing reads the region's inputs again at backward time: a region whose input a later
step of the program writes in place is not made; an input the caller writes in place
between the forward and the backward is not detected (as for the values the NumPy code
keeps). The kernels' text goes to ``backend.native_compiler()`` (numba, behind the kernel
switch); without it, or where numba refuses a kernel, the program keeps its NumPy code.
"""
import re

import numpy as np

from ..nn.functional.activation import Gelu
from ..ops import arithmetic, indexing, reduction, unary
from .symbolic import has_symbols

# per op: the forward over the operands' scalars {0}, {1}; the gradient of each operand
# from the output's gradient {g} and the output {y}. ONE and ZERO are in the data's dtype.
SCALAR = {
    arithmetic.Add: ('{0} + {1}', ('{g}', '{g}')),
    arithmetic.Sub: ('{0} - {1}', ('{g}', '-{g}')),
    arithmetic.Rsub: ('{1} - {0}', ('-{g}', '{g}')),        # 0.25 - x
    arithmetic.Mul: ('{0} * {1}', ('{g} * {1}', '{g} * {0}')),
    # Div.backward: ga = g / b, gb = -ga * a / b; Rdiv (2.0 / x): -g * other / (x * x)
    arithmetic.Div: ('{0} / {1}', ('{g} / {1}', '-({g} / {1}) * {0} / {1}')),
    arithmetic.Rdiv: ('{1} / {0}', ('-{g} * {1} / ({0} * {0})', '')),
    unary.Neg: ('-{0}', ('-{g}',)),
    unary.Tanh: ('_tanh({0})', ('{g} * (ONE - {y} * {y})',)),
    # the native eager kernels' (PyTorch's): NaN and -0.0 pass through, and the gradient
    # passes where the output is NaN
    unary.Relu: ('(ZERO if {0} < ZERO else {0})', ('(ZERO if {y} <= ZERO else {g})',)),
    # where(mask, value, x) with a number for value; the mask (a bool array) gets no
    # gradient, x gets where(mask, 0, g)
    indexing.MaskedFill: ('({2} if {1} else {0})', ('(ZERO if {1} else {g})', '', '')),
}
# ops whose formulas depend on a parameter: (parameter, {value: formulas})
BY_PARAMETER = {
    # native/activation.py's formulas (native/elementwise.py)
    Gelu: ('approximate', {
        'none': ('_gelu({0})', ('{g} * _gelu_grad({0})',)),
        'tanh': ('_gelu_tanh({0}, GK, GC)', ('{g} * _gelu_tanh_grad({0}, GK, GC)',)),
    }),
}
# operands that are boolean masks rather than data: (op, operand position)
MASKS = {(indexing.MaskedFill, 1)}

_DTYPES = {np.dtype(np.float32): 'float32', np.dtype(np.float64): 'float64'}
MIN_STEPS = 2       # a single op is one NumPy ufunc already


def formulas(step):
    """(forward, gradients) of a step the generator fuses, or None."""
    entry = SCALAR.get(step.cls)
    if entry is not None:
        return entry
    by = BY_PARAMETER.get(step.cls)
    if by is None or not step.params or set(step.params) != {by[0]}:
        return None
    return by[1].get(step.params[by[0]])


class Region:
    """Steps ``first..last`` of a program fused (see the module docstring)."""

    def __init__(self, index, steps, shape, dtype):
        self.index = index
        # the elementwise steps' indices, in order; the steps between them read nothing
        # made or read here (they run before the kernel, which runs at the last one)
        self.steps = steps
        self.members = list(steps)    # and the sum ending the run, if one does
        self.sum_step = None
        self.total = None             # the sum's slot
        self.first, self.last = steps[0], steps[-1]
        self.shape, self.dtype = shape, dtype
        self.inputs = []              # external array operands: ('s', slot) or ('c', index)
        self.input_meta = []          # and their (shape, dtype)
        self.exports = []             # slots produced here that others read
        self.grad_outputs = []        # exported slots whose gradients flow back in
        self.grad_inputs = []         # external slots that get gradients
        # broadcasting: the loop nest's extents (the region's dimensions, merged where every
        # input is either whole or broadcast in both) and per input the loop levels it runs
        # along; None where every input has the region's shape (one flat loop)
        self.extents = None
        self.levels = None
        self.forward_name = f'R{index}f'
        self.backward_name = f'R{index}b'
        self.source = None

    def produced(self, steps):
        return {steps[k].outs[0] for k in self.members}

    def shape_of(self, slot):
        """The shape text of an exported value when not the region's (the sum's: 0-d)."""
        return '()' if slot == self.total else None

    def argument_types(self):
        """Per kernel, the dtype names of its arguments (each a flat C array)."""
        dims = ('int64',) if self.extents is not None else ()
        data = _DTYPES[self.dtype]
        inputs = tuple(str(m[1]) for m in self.input_meta)
        found = {'forward': dims + inputs + (data,) * len(self.exports)}
        if self.grad_inputs:
            found['backward'] = dims + inputs + (data,) * (len(self.grad_outputs)
                                                           + len(self.grad_inputs))
        return found


def _broadcasts(shape, to):
    """Whether an operand of ``shape`` broadcasts to ``to`` (the output's shape)."""
    if len(shape) > len(to):
        return False
    return all(a == b or a == 1 for a, b in zip(shape[::-1], to[::-1]))


def _layout(shape, operand_shapes):
    """(extents, levels per operand) of the loop nest over ``shape`` (see Region), or
    (None, None) where every operand is whole."""
    ndim = len(shape)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in operand_shapes]
    groups = []         # [extent, which operands run along it]
    for d in range(ndim):
        if shape[d] == 1:
            continue
        along = tuple(p[d] == shape[d] for p in padded)
        if groups and groups[-1][1] == along:
            groups[-1][0] *= shape[d]
        else:
            groups.append([shape[d], along])
    if all(all(along) for _, along in groups):
        return None, None
    if not groups:
        groups = [[1, tuple(False for _ in padded)]]
    extents = [g[0] for g in groups]
    levels = [tuple(level for level, (_, along) in enumerate(groups) if along[k])
              for k in range(len(padded))]
    return extents, levels


def find_regions(program, input_arrays):
    """The regions of ``program``, or [] where none fits (``input_arrays``: a call's inputs)."""
    if program.batch_slot is not None or input_arrays is None:
        return []
    steps = program.steps
    meta = {i: (a.shape, a.dtype) for i, a in enumerate(input_arrays)
            if isinstance(a, np.ndarray)}
    for step in steps:
        for o, m in zip(step.outs, step.out_meta or ()):
            if o is not None and m is not None:
                meta[o] = m
    written = {s.refs[0][1] for s in steps if s.inplace and s.refs[0][0] == 's'}

    def operand_meta(kind, v):
        if kind == 's':
            return meta.get(v)
        c = program.constants[v]
        return (c.shape, c.dtype) if isinstance(c, np.ndarray) else None

    def fusable(k):
        step = steps[k]
        if formulas(step) is None or not step.out_meta or not _plain(step):
            return None
        shape, dtype = step.out_meta[0]
        if dtype not in _DTYPES or has_symbols(shape):
            return None
        for j, (kind, v) in enumerate(step.refs):
            if kind in ('s', 'c'):
                m = operand_meta(kind, v)
                want = np.dtype(bool) if (step.cls, j) in MASKS else dtype
                if m is None or m[1] != want or has_symbols(m[0]) or \
                        not _broadcasts(m[0], shape):
                    return None
            elif (step.cls, j) in MASKS or type(v) not in (int, float):
                return None
        return shape, dtype

    def slots(k):
        return {v for kind, v in steps[k].refs if kind == 's'}

    runs, current, key, touched = [], [], None, set()
    for k in range(len(steps)):
        this = fusable(k)
        if this is not None and this == key:
            current.append(k)
            touched |= slots(k) | {steps[k].outs[0]}
            continue
        if current and this is None and not steps[k].inplace and not slots(k) & touched:
            # a step reading nothing the run made or read (attention's mask between its
            # scaling and its masked_fill): it runs before the region's kernel, called at
            # the run's end. One reading the run's input could be its last use, which frees
            # it (or lends its buffer to the step's result) before the kernel reads it.
            continue
        if len(current) >= MIN_STEPS:
            runs.append((current, key))
        current, key = ([k], this) if this is not None else ([], None)
        touched = slots(k) | {steps[k].outs[0]} if this is not None else set()
    if len(current) >= MIN_STEPS:
        runs.append((current, key))

    consumers = {}
    for k, step in enumerate(steps):
        for kind, v in step.refs:
            if kind == 's':
                consumers.setdefault(v, set()).add(k)
    returned = set(program.computed) | {ref[1] for ref in program.outputs
                                        if ref is not None and ref[0] == 's'}
    regions = []
    for members, (shape, dtype) in runs:
        region = Region(len(regions), members, shape, dtype)
        inside = set(members)
        produced = region.produced(steps)
        needs_grad = set()
        for k in members:
            step = steps[k]
            for j, (kind, v) in enumerate(step.refs):
                if kind == 'v' or (kind == 's' and v in produced):
                    continue
                if (kind, v) not in region.inputs:
                    region.inputs.append((kind, v))
                    region.input_meta.append(operand_meta(kind, v))
                if kind == 's' and step.needs is not None and step.needs[j]:
                    needs_grad.add(v)
        if any(v in written for kind, v in region.inputs if kind == 's'):
            continue        # the backward recomputes from inputs a later op overwrites
        region.extents, region.levels = _layout(shape, [m[0] for m in region.input_meta])
        last_out = steps[region.last].outs[0]
        after = region.last + 1
        if after < len(steps) and _whole_sum(steps[after], last_out, dtype) and \
                consumers.get(last_out) == {after} and last_out not in returned:
            # the sum of the whole result ending the run: summed in the kernel, so the
            # result is never stored and its gradient is one number
            region.sum_step = after
            region.total = steps[after].outs[0]
            region.members.append(after)
            region.last = after
            inside.add(after)
        for k in region.members:
            o = steps[k].outs[0]
            if o in returned or consumers.get(o, set()) - inside:
                region.exports.append(o)
                if steps[k].needs is not None:
                    region.grad_outputs.append(o)
        region.grad_inputs = [v for kind, v in region.inputs if kind == 's' and v in needs_grad]
        region.source = _kernel_source(region, steps)
        regions.append(region)
    return regions


def _whole_sum(step, slot, dtype):
    """Whether ``step`` sums all of ``slot`` to a number of its dtype."""
    return (step.cls is reduction.Sum and step.refs == (('s', slot),) and not step.inplace
            and step.params == {'dim': None, 'keepdim': False, 'dtype': None}
            and all(c is None for c in step.casts) and step.out_meta
            and step.out_meta[0] == ((), dtype))


def _plain(step):
    """A step with nothing but its operands: as kernels.inline_kernel asks."""
    if step.multi or step.inplace or not step.real or any(c is not None for c in step.casts):
        return False
    if step.cls in BY_PARAMETER:        # its parameter picked the formulas
        return True
    return not step.params or (set(step.params) == {'alpha'} and step.params['alpha'] == 1)


def _index(levels, n_levels):
    """The flat index, in a loop nest of ``n_levels``, of an array running along ``levels``
    (Horner's rule over the extents ``E<level>``; 0 for one broadcast along all)."""
    if not levels:
        return '0'
    text = f'q{levels[0]}'
    for level in levels[1:]:
        if '+' in text:
            text = f'({text})'
        text = f'{text} * E{level} + q{level}'
    return text


def _nest(region, body):
    """The loop lines running ``body`` (unindented lines, per element, the region's flat
    index ``i``) over the region: one flat loop, or a nest over ``region.extents``."""
    if region.extents is None:
        return ['    for i in range(a0.shape[0]):'] + ['        ' + line for line in body]
    n = len(region.extents)
    lines = [f'    E{d} = dims[{d}]' for d in range(n)]
    for d in range(n):
        lines.append('    ' * (d + 1) + f'for q{d} in range(E{d}):')
    lines.append('    ' * (n + 1) + f'i = {_index(tuple(range(n)), n)}')
    return lines + ['    ' * (n + 1) + line for line in body]


def _size(region):
    if region.extents is None:
        return 'a0.shape[0]'
    return ' * '.join(f'E{d}' for d in range(len(region.extents)))


def _row_sums(region, row, target):
    """Lines adding each innermost row of ``row`` (a region-sized buffer) into ``target``
    (an index text over the outer loops' ``q``): a broadcast input's gradient entry."""
    n = len(region.extents)
    lines = []
    for d in range(n - 1):
        lines.append('    ' * (d + 1) + f'for q{d} in range(E{d}):')
    pad = '    ' * n
    first = f'({_index(tuple(range(n - 1)), n - 1)}) * E{n - 1}' if n > 1 else '0'
    lines += [pad + f'i = {first}',
              pad + f'{target} += _block_sum({row}[i:i + E{n - 1}], E{n - 1})']
    return lines


def _kernel_source(region, steps):
    """The module text of the region's two kernels."""
    dtype = _DTYPES[region.dtype]
    numbers = {}

    def operand(ref):
        kind, v = ref
        if kind == 's':
            return f't{v}'
        if kind == 'c':
            return f'c{v}'
        text = repr(float(v))
        if text in ('nan', 'inf', '-inf'):
            text = f"float('{text}')"
        if text not in numbers:
            numbers[text] = f'K{len(numbers)}'
        return numbers[text]

    n_levels = len(region.extents) if region.extents is not None else 0

    def at(k):
        """The index input ``k`` is read (or its gradient written) at."""
        if region.extents is None or len(region.levels[k]) == n_levels:
            return 'i'
        return _index(region.levels[k], n_levels)

    loads = [f'{operand(ref)} = a{k}[{at(k)}]' for k, ref in enumerate(region.inputs)]
    chain = {}          # slot -> its forward line, its operands
    order = []
    for k in region.steps:
        step = steps[k]
        args = [operand(r) for r in step.refs]
        out = step.outs[0]
        chain[out] = (f't{out} = {formulas(step)[0].format(*args)}', args)
        order.append(out)
    total = steps[region.sum_step].outs[0] if region.sum_step is not None else None
    summed = steps[region.last - 1].outs[0] if total is not None else None
    dims = ['dims'] if region.extents is not None else []
    arrays = [f'a{i}' for i in range(len(region.inputs))]
    header = ['import math', 'import numpy as np', 'from numba import njit',
              'from dynagrad.native.elementwise import tanh as _tanh, gelu as _gelu, '
              'gelu_grad as _gelu_grad, gelu_tanh as _gelu_tanh, '
              'gelu_tanh_grad as _gelu_tanh_grad, block_sum as _block_sum', '',
              f'# {len(region.steps)} elementwise ops fused by dynagrad.compile ({dtype})'
              + (', then their sum' if total is not None else '')
              + (f', over a loop nest {region.extents} (broadcast inputs)'
                 if region.extents is not None else ''),
              f'_F = np.{dtype}', 'ONE = _F(1)', 'ZERO = _F(0)',
              # GELU's tanh form: sqrt(2/pi) and the cubic coefficient, as activation.py
              'GK = _F(math.sqrt(2 / math.pi))', 'GC = _F(0.044715)']
    jit = "@njit(cache=True, nogil=True, error_model='numpy')"

    # forward: the whole chain per element, the exported values stored
    outs = [f'o{i}' for i in range(len(region.exports))]
    fwd = [jit, f'def forward({", ".join(dims + arrays + outs)}):']
    body = loads + [chain[o][0] for o in order]
    body += [f'o{i}[i] = t{slot}' for i, slot in enumerate(region.exports) if slot != total]
    if total is None:
        fwd += _nest(region, body)
    else:
        # the values go to a scratch buffer, then one float64 sum of it (for float32 data
        # more accurate than NumPy's pairwise sum). An accumulator in the loop would keep it
        # from vectorising, without fast-math (it took tanh with it, 6x slower); so did
        # blocks of 512 indexed from each block's start (numba's negative-index check)
        body.append(f'values[i] = t{summed}')
        nest, setup = _nest(region, body), len(region.extents or ())
        fwd += nest[:setup] + [f'    values = np.empty({_size(region)}, _F)'] + nest[setup:]
        fwd += [f'    o{region.exports.index(total)}[0] = _F(_block_sum(values, values.size))']

    # backward: the gradient formulas in reverse, over the chain recomputed
    bwd_lines, live, read, before = [], set(), set(), []
    grads_in = {slot: f'g{i}' for i, slot in enumerate(region.grad_outputs)}
    for slot, name in grads_in.items():
        if slot == total:       # the sum's gradient is one number, every element's
            before.append(f'    d{summed}_all = {name}[0]')
            bwd_lines.append(f'd{summed} = d{summed}_all')
            live.add(summed)
        else:
            bwd_lines.append(f'd{slot} = {name}[i]')
            live.add(slot)
    for k in reversed(region.steps):
        step = steps[k]
        out = step.outs[0]
        if step.needs is None or out not in live:
            continue
        args = chain[out][1]
        for j, ((kind, v), need) in enumerate(zip(step.refs, step.needs)):
            if kind != 's' or not need:
                continue
            formula = formulas(step)[1][j]
            expr = formula.format(*args, g=f'd{out}', y=f't{out}')
            read.update(args[int(p)] for p in _OPERAND.findall(formula))
            if '{y}' in formula:
                read.add(f't{out}')
            if v in live:
                bwd_lines.append(f'd{v} = d{v} + {expr}')
            else:
                bwd_lines.append(f'd{v} = {expr}')
                live.add(v)
    # only the forward values the formulas read (and what they are made of)
    needed, wanted = set(), {int(t[1:]) for t in read if t.startswith('t')}
    for slot in reversed(order):
        if slot in wanted:
            needed.add(slot)
            wanted.update(int(a[1:]) for a in chain[slot][1] if a.startswith('t'))
    # an input no gradient reached gets none (not zeros), as in the NumPy code
    region.grad_inputs = [v for v in region.grad_inputs if v in live]
    results = [f'r{i}' for i in range(len(region.grad_inputs))]
    bwd = []
    if results:
        # a broadcast input's gradient is summed to its shape in the kernel, in float64
        # (eager rounds each element's gradient to the dtype, as here, then sums them
        # pairwise in the dtype: the results differ by that sum's rounding)
        position = {v: region.inputs.index(('s', v)) for v in region.grad_inputs}
        reduced = [r for r, v in enumerate(region.grad_inputs) if at(position[v]) != 'i']
        parameters = dims + arrays + list(grads_in.values()) + results
        bwd = [jit, f'def backward({", ".join(parameters)}):']
        bwd += before
        bwd += [f'    s{r} = np.zeros(r{r}.shape[0], np.float64)' for r in reduced]
        body = loads + [chain[o][0] for o in order if o in needed] + bwd_lines
        # an input running along the innermost loop gets a term per element there; one
        # broadcast along it, a row's sum (the terms stored, then summed by _block_sum: an
        # accumulator in the loop would be one chain of dependent adds, 3x slower)
        rows = []
        for r, v in enumerate(region.grad_inputs):
            if r not in reduced:
                body.append(f'r{r}[i] = d{v}')
            elif n_levels - 1 in region.levels[position[v]]:
                body.append(f's{r}[{at(position[v])}] += d{v}')
            else:
                body.append(f'row{r}[i] = d{v}')
                rows.append(r)
        nest = _nest(region, body)
        bwd += nest[:n_levels]
        bwd += [f'    row{r} = np.empty({_size(region)}, _F)' for r in rows]
        bwd += nest[n_levels:]
        for r in rows:
            bwd += _row_sums(region, f'row{r}', f's{r}[{at(position[region.grad_inputs[r]])}]')
        for r in reduced:
            bwd += [f'    for j in range(r{r}.shape[0]):', f'        r{r}[j] = _F(s{r}[j])']
    constants_lines = [f'{name} = _F({text})' for text, name in numbers.items()]
    return '\n'.join(header + constants_lines + ['', ''] + fwd + ['', ''] + bwd) + '\n'


_OPERAND = re.compile(r'{(\d+)}')


def grad_flat(g, shape, dtype):
    """A gradient as the flat C array the backward kernel reads (zeros where none came)."""
    if g is None:
        return np.zeros(int(np.prod(shape)), dtype)
    if g.shape != shape:
        g = np.broadcast_to(g, shape)
    if g.dtype != dtype:
        g = g.astype(dtype)
    return g.ravel()


def forward_lines(region, namespace, operand_text):
    """The program's forward lines calling the region's kernel."""
    reference = _reference(region, operand_text)
    namespace[f'D{region.index}'] = region.dtype
    summed = ' and their sum' if region.total is not None else ''
    lines = [f'    # fused region {region.index}: {len(region.steps)} elementwise ops{summed}, '
             'one native kernel']
    lines.append('    ' + '; '.join(f'v{o} = _empty({region.shape_of(o) or reference}, '
                                    f'D{region.index})' for o in region.exports))
    args = _dims(region, namespace) + [_flat_input(ref, operand_text) for ref in region.inputs]
    args += [f'v{o}.ravel()' for o in region.exports]
    lines.append(f'    {region.forward_name}({", ".join(args)})')
    return lines


def backward_lines(region, namespace, operand_text):
    """The program's backward lines calling the region's backward kernel."""
    present = ' or '.join(f'g{o} is not None' for o in region.grad_outputs) or 'False'
    lines = [f'    if {present}:    # fused region {region.index}']
    if region.grad_inputs:
        reference = _reference(region, operand_text)
        d = f'D{region.index}'
        shapes = {v: m[0] for (kind, v), m in zip(region.inputs, region.input_meta)
                  if kind == 's'}
        lines.append('        ' + '; '.join(
            f'r{i} = _empty({reference if shapes[v] == region.shape else repr(shapes[v])}, {d})'
            for i, v in enumerate(region.grad_inputs)))
        args = _dims(region, namespace)
        args += [_flat_input(ref, operand_text) for ref in region.inputs]
        args += [f'_grad_flat(g{o}, {region.shape_of(o) or reference}, {d})'
                 for o in region.grad_outputs]
        args += [f'r{i}.ravel()' for i in range(len(region.grad_inputs))]
        lines.append(f'        {region.backward_name}({", ".join(args)})')
        for i, v in enumerate(region.grad_inputs):
            lines.append(f'        g{v} = _acc(g{v}, r{i})')
    lines.append('        ' + ' = '.join(f'g{o}' for o in region.grad_outputs) + ' = None'
                 if region.grad_outputs else '        pass')
    return lines


def _dims(region, namespace):
    """The loop nest's extents, the first argument of a broadcasting region's kernels."""
    if region.extents is None:
        return []
    namespace[f'LOOP{region.index}'] = np.array(region.extents, np.int64)
    return [f'LOOP{region.index}']


def _reference(region, operand_text):
    """The region's shape, as text: a whole input's shape, else the captured one."""
    for (kind, v), m in zip(region.inputs, region.input_meta):
        if kind == 's' and m[0] == region.shape:
            return f'{operand_text(("s", v))}.shape'
    return repr(tuple(region.shape))


def _flat_input(ref, operand_text):
    return f'{operand_text(ref)}.ravel()'
