"""Text forms of tensors: PyTorch 2.x's ``repr`` and PyTorch 0.3's legacy form.

Everything here is a pure function over NumPy arrays plus the module-level
print options, so the Tensor class only has to pass its data, its dtype name
and the autograd suffixes it wants shown.

The modern form (:func:`format_tensor`) is checked against ``repr`` of real
torch tensors in ``tests/test_tensor_str.py``.  The legacy form
(:func:`format_legacy`) has no oracle on this machine; its layout follows
transcripts of PyTorch 0.3 sessions (see the notes on :func:`format_legacy`).
"""
import math

import numpy as np

__all__ = ['format_tensor', 'format_legacy', 'legacy_type_name',
           'set_printoptions', 'get_printoptions']

# --------------------------------------------------------------------------
# Print options
# --------------------------------------------------------------------------

_PROFILES = {
    'default': dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    'short': dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    'full': dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}

_OPTS = dict(_PROFILES['default'], sci_mode=None, legacy=False)


def set_printoptions(precision=None, threshold=None, edgeitems=None,
                     linewidth=None, profile=None, sci_mode=None, legacy=None):
    """Same semantics as ``torch.set_printoptions``, plus ``legacy``.

    As in torch, an unknown profile name is ignored and ``sci_mode`` is always
    overwritten (so any call without ``sci_mode`` goes back to automatic).
    ``legacy`` is left alone when None, except that any profile resets it to
    False, so ``set_printoptions(profile='default')`` restores everything.
    """
    if profile in _PROFILES:
        _OPTS.update(_PROFILES[profile])
        _OPTS['legacy'] = False
    for key, value in (('precision', precision), ('threshold', threshold),
                       ('edgeitems', edgeitems), ('linewidth', linewidth)):
        if value is not None:
            _OPTS[key] = value
    _OPTS['sci_mode'] = sci_mode
    if legacy is not None:
        _OPTS['legacy'] = bool(legacy)


def get_printoptions():
    """A copy of the current options (torch's keys plus ``legacy``)."""
    return dict(_OPTS)


# --------------------------------------------------------------------------
# Modern form: repr(torch.Tensor)
# --------------------------------------------------------------------------

# Dtypes torch does not name in a non-empty tensor's repr (besides the
# default floating dtype, which the caller may change).
_IMPLICIT_DTYPES = ('int64', 'bool')


class _ElementFormat:
    """Fixed-width text for every element of one tensor.

    The width and the notation (integral floats ``1.``, fixed ``1.0000`` or
    scientific ``1.0000e+00``) are chosen once from the values that will be
    shown, so that columns line up.
    """

    def __init__(self, values, is_float, precision, sci_override):
        self.is_float = is_float
        self.precision = precision
        self.sci = False
        self.integral = True
        if not is_float:
            # ints and bools: plain str(), padded to the longest one
            self.width = max([len(str(v)) for v in values], default=1)
            return
        finite = [v for v in values if v != 0 and math.isfinite(v)]
        if finite:
            self._choose_notation(finite)
        if sci_override is not None:
            self.sci = sci_override
        # Width is measured in the notation that will actually be used;
        # zeros, nan and inf are not measured (they may stick out).
        self.width = max([len(self._text(v)) for v in finite], default=1)

    def _choose_notation(self, finite):
        magnitudes = [abs(v) for v in finite]
        big, small = max(magnitudes), min(magnitudes)
        self.integral = all(v == math.ceil(v) for v in finite)
        # A wide dynamic range or very large values need an exponent; tiny
        # values only matter when they would show up as 0.0000.
        self.sci = big / small > 1000.0 or big > 1.0e8
        if not self.integral and small < 1.0e-4:
            self.sci = True

    def _text(self, value):
        if not self.is_float:
            return str(value)
        if self.sci:
            return f'{value:.{self.precision}e}'
        if self.integral:
            text = f'{value:.0f}'
            return text + '.' if math.isfinite(value) else text
        return f'{value:.{self.precision}f}'

    def __call__(self, value):
        return self._text(value).rjust(self.width)


class _ComplexFormat:
    """PyTorch's complex elements: the real and the imaginary parts each formatted with a
    formatter chosen over all the parts of their kind, joined as ``1.+2.j``."""

    def __init__(self, values, precision, sci_override):
        self.real = _ElementFormat([v.real for v in values], True, precision, sci_override)
        self.imag = _ElementFormat([v.imag for v in values], True, precision, sci_override)
        # torch budgets the 'j' as one more column of an element
        self.width = self.real.width + self.imag.width + 1

    def __call__(self, value):
        value = complex(value)
        imag = (self.imag(value.imag) + 'j').lstrip()
        sign = '' if imag[0] in '+-' else '+'
        return self.real(value.real) + sign + imag


def _edge_indices(size, edge):
    return list(range(edge)) + list(range(size - edge, size))


def _summarized(array, edge):
    """The elements that a summarised print shows, in their layout."""
    for axis, size in enumerate(array.shape):
        if size > 2 * edge:
            array = np.take(array, _edge_indices(size, edge), axis=axis)
    return array


def _layout(array, indent, summarize, fmt):
    """Nested brackets; ``indent`` is the column the opening '[' sits in."""
    edge = _OPTS['edgeitems']
    if array.ndim == 0:
        return fmt(array.item())
    cut = summarize and array.shape[0] > 2 * edge
    if array.ndim == 1:
        return _layout_row(array, indent, cut, fmt)
    if cut:
        parts = ([_layout(array[i], indent + 1, summarize, fmt) for i in range(edge)]
                 + ['...']
                 + [_layout(array[i], indent + 1, summarize, fmt)
                    for i in range(len(array) - edge, len(array))])
    else:
        parts = [_layout(sub, indent + 1, summarize, fmt) for sub in array]
    # One blank line fewer than the depth separates sub-blocks.
    separator = ',' + '\n' * (array.ndim - 1) + ' ' * (indent + 1)
    return '[' + separator.join(parts) + ']'


def _layout_row(vector, indent, cut, fmt):
    edge = _OPTS['edgeitems']
    values = vector.tolist()
    if cut:
        items = ([fmt(v) for v in values[:edge]] + [' ...']
                 + [fmt(v) for v in values[-edge:]])
    else:
        items = [fmt(v) for v in values]
    # Every item is budgeted width + 2 columns for the ', ' after it.
    per_line = max(1, (_OPTS['linewidth'] - indent) // (fmt.width + 2))
    lines = [', '.join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return '[' + (',\n' + ' ' * (indent + 1)).join(lines) + ']'


def _torch_len(suffix):
    # Line breaks must fall where torch puts them, and torch measured
    # 'dtype=torch.x', which is shorter than 'dtype=dynagrad.x'.
    return len(suffix.replace('dynagrad.', 'torch.'))


def _append_suffixes(text, suffixes, indent):
    """Add ', suffix' items, moving one to its own line when it would pass
    the line width.  Like torch, the tensor's last line is counted two
    columns longer than it is; lines it starts for suffixes are exact."""
    used = len(text) - text.rfind('\n') + 1
    for suffix in suffixes:
        if used + _torch_len(suffix) + 2 > _OPTS['linewidth']:
            text += ',\n' + ' ' * indent + suffix
            used = indent + _torch_len(suffix)
        else:
            text += ', ' + suffix
            used += _torch_len(suffix) + 2
    return text + ')'


def _as_printable(array, dtype_name):
    array = np.asarray(array)
    if dtype_name in ('float16', 'bfloat16') or dtype_name.startswith('float8_'):
        # torch widens half, bfloat16 and float8 tensors before formatting; values are
        # unchanged.
        array = array.astype(np.float32)
        if dtype_name == 'float8_e8m0fnu':
            # e8m0 has no zero: torch treats its smallest value, 2**-127 (what 0 converts
            # to), as zero when it prints, and shows it as one
            array[array == np.float32(2.0 ** -127)] = 0
    return array


def format_tensor(array, *, dtype_name, suffixes=(), prefix='tensor(',
                  default_dtype_name='float32', device=None):
    """``repr(torch_tensor)``, spelled with ``dynagrad.``; ``array`` is on the host and
    ``device`` names the tensor's device when it is not the CPU (shown first, as PyTorch
    shows it).

    ``suffixes`` (e.g. ``'requires_grad=True'``, ``'grad_fn=<MulBackward0>'``)
    come after the size/dtype suffixes this function adds itself.
    ``default_dtype_name`` is the current default floating dtype, which torch
    leaves unnamed.
    """
    array = _as_printable(array, dtype_name)
    indent = len(prefix)
    default_complex = 'complex128' if default_dtype_name == 'float64' else 'complex64'
    own = [] if device is None else [f"device='{device}'"]
    if array.size == 0:
        # Empty tensors show their shape (unless 1-D) and any dtype but the
        # default float; int64 and bool are named here, unlike below.
        if array.ndim != 1:
            own.append('size=' + str(tuple(array.shape)))
        if dtype_name != default_dtype_name:     # torch names the default complex here
            own.append('dtype=dynagrad.' + dtype_name)
        body = '[]'
    else:
        if dtype_name not in (default_dtype_name, default_complex) + _IMPLICIT_DTYPES:
            own.append('dtype=dynagrad.' + dtype_name)
        summarize = array.size > _OPTS['threshold']
        shown = _summarized(array, _OPTS['edgeitems']) if summarize else array
        if array.dtype.kind == 'c':
            fmt = _ComplexFormat(shown.ravel().tolist(), _OPTS['precision'], _OPTS['sci_mode'])
        else:
            fmt = _ElementFormat(shown.ravel().tolist(), array.dtype.kind == 'f',
                                 _OPTS['precision'], _OPTS['sci_mode'])
        body = _layout(array, indent, summarize, fmt)
    return _append_suffixes(prefix + body, own + list(suffixes), indent)


def format_meta(shape, *, dtype_name, suffixes=(), default_dtype_name='float32'):
    """``repr`` of a meta tensor: no values, so its shape stands in for them (and any dtype
    but the default float is named, int64 and bool included)."""
    own = ["device='meta'", 'size=' + str(tuple(shape))]
    if dtype_name != default_dtype_name:
        own.append('dtype=dynagrad.' + dtype_name)
    return _append_suffixes('tensor(...', own + list(suffixes), len('tensor('))


# --------------------------------------------------------------------------
# Legacy form: PyTorch 0.3's repr
# --------------------------------------------------------------------------

_LEGACY_NAMES = {
    'float32': 'FloatTensor', 'float64': 'DoubleTensor', 'float16': 'HalfTensor',
    'bfloat16': 'BFloat16Tensor',
    'uint8': 'ByteTensor', 'int8': 'CharTensor', 'int16': 'ShortTensor',
    'int32': 'IntTensor', 'int64': 'LongTensor', 'bool': 'BoolTensor',
    # newer than 0.3; torch's Tensor.type() names them so (no such classes exist)
    'uint16': 'UInt16Tensor', 'uint32': 'UInt32Tensor', 'uint64': 'UInt64Tensor',
    'float8_e4m3fn': 'Float8_e4m3fnTensor', 'float8_e5m2': 'Float8_e5m2Tensor',
    'float8_e4m3fnuz': 'Float8_e4m3fnuzTensor', 'float8_e5m2fnuz': 'Float8_e5m2fnuzTensor',
    'float8_e8m0fnu': 'Float8_e8m0fnuTensor',
}


def legacy_type_name(dtype_name):
    """'float32' -> 'FloatTensor' and so on (0.3's tensor type names)."""
    return _LEGACY_NAMES[dtype_name]


def _exponent(magnitude):
    """Number of digits before the decimal point (<= 0 for values < 1)."""
    return math.floor(math.log10(magnitude)) + 1


class _LegacyFormat:
    """0.3's single number format for a whole tensor.

    Widths come from magnitudes only, so a minus sign eats the leading space
    (0.3 printed ``-1 -2 -3`` under `` 1  2  3``).
    """

    def __init__(self, values, precision):
        finite = values[np.isfinite(values)]
        magnitudes = np.abs(finite)
        nonzero = magnitudes[magnitudes != 0]
        # nan/inf are not measured, but the column must fit 'nan'/'inf'.
        min_width = 3 if finite.size < values.size else 0
        exp_max = _exponent(nonzero.max()) if nonzero.size else 1
        exp_min = _exponent(nonzero.min()) if nonzero.size else 1
        self.scale = 1.0
        if np.all(finite == np.ceil(finite)):
            if exp_max > precision + 1:
                self._sci(precision, exp_min, exp_max, min_width)
            else:
                self.width = max(min_width, 2, exp_max + 1)
                self.spec = f'{self.width}.0f'
        elif exp_max - exp_min > precision:
            self._sci(precision, exp_min, exp_max, min_width)
        else:
            if exp_max > precision + 1 or exp_max < 0:
                # Too many leading digits or zeros: factor out a power of 10.
                self.scale = 10.0 ** (exp_max - 1)
                width = 3 + precision
            else:
                width = 3 + precision if exp_max == 0 else exp_max + 2 + precision
            self.width = max(min_width, width)
            self.spec = f'{self.width}.{precision}f'

    def _sci(self, precision, exp_min, exp_max, min_width):
        width = 7 + precision
        if max(abs(exp_min), abs(exp_max)) > 99:
            width += 1          # three-digit exponent
        self.width = max(min_width, width)
        self.spec = f'{self.width}.{precision}e'

    def scale_line(self):
        return f'{self.scale:.5e} *\n' if self.scale != 1.0 else ''

    def row(self, texts, indent=''):
        """One line of formatted values; a scaled block gets one more
        leading space (0.3 printed ``  1.3694`` under ``1.00000e-03 *``)."""
        lead = indent + (' ' if self.scale != 1.0 else '')
        return lead + ' '.join(texts) + '\n'

    def __call__(self, value):
        return format(value / self.scale, self.spec)


def _legacy_cut(size, edge, summarize):
    """Indices to show along one axis; None marks the elided middle."""
    if summarize and size > 2 * edge:
        return list(range(edge)) + [None] + list(range(size - edge, size))
    return list(range(size))


def _legacy_vector(vector, fmt, summarize):
    edge = _OPTS['edgeitems']
    out = fmt.scale_line()
    for i in _legacy_cut(len(vector), edge, summarize):
        out += '...\n' if i is None else fmt.row([fmt(vector[i])])
    return out


def _legacy_matrix(matrix, fmt, summarize, indent=''):
    """Rows of a 2-D slice, split into 'Columns a to b' blocks when the
    rows would not fit in the line width."""
    edge = _OPTS['edgeitems']
    rows = _legacy_cut(matrix.shape[0], edge, summarize)
    cols = _legacy_cut(matrix.shape[1], edge, summarize)
    per_line = max(1, (_OPTS['linewidth'] - len(indent)) // (fmt.width + 1))
    blocks = [cols[i:i + per_line] for i in range(0, len(cols), per_line)]
    out = ''
    for block in blocks:
        if len(blocks) > 1:
            shown = [c for c in block if c is not None]
            out += f'\n{indent}Columns {shown[0]} to {shown[-1]} \n'
        out += fmt.scale_line()
        for r in rows:
            if r is None:
                out += indent + '...\n'
                continue
            texts = ['...'.rjust(fmt.width) if c is None else fmt(matrix[r, c])
                     for c in block]
            out += fmt.row(texts, indent)
    return out


def _legacy_slices(array, fmt, summarize):
    """3-D and up: each trailing 2-D matrix under a '(i ,j ,.,.) = ' header,
    with a blank line between matrices."""
    edge = _OPTS['edgeitems']
    lead_axes = [_legacy_cut(n, edge, summarize) for n in array.shape[:-2]]
    parts = []
    for index in _product(lead_axes):
        if None in index:
            if not parts or parts[-1] != '...\n':      # one marker per elided run
                parts.append('...\n')
            continue
        header = '(' + ''.join(f'{i:<2d},' for i in index) + '.,.) = \n'
        parts.append(header + _legacy_matrix(array[index], fmt, summarize, ' '))
    return '\n'.join(parts)


def _product(axes):
    combos = [()]
    for axis in axes:
        combos = [c + (i,) for c in combos for i in axis]
    return combos


def format_legacy(array, *, type_name):
    """PyTorch 0.3's ``repr`` of a tensor, e.g. ``'\\n 1  2\\n 3  4\\n'
    '[dynagrad.FloatTensor of size 2x2]\\n'``.

    Layout notes (there is no 0.3 to test against; these follow 0.3
    transcripts): a power-of-ten factor is printed as ``1.00000e-03 *`` on
    its own line, unindented, and the scaled values get one extra leading
    space; column blocks are headed ``Columns 0 to 9 `` (0-based, inclusive,
    trailing space), each block after a blank line; in 3-D and up, matrix
    rows are indented by one space under their ``(0 ,.,.) = `` header.
    Past ``threshold`` elements (our own simple choice; 0.3 printed
    everything): along every axis longer than ``2 * edgeitems`` only the
    first and last ``edgeitems`` entries are shown, with ``...`` in place of
    the middle (a line of its own for rows, vector entries and matrices, a
    column entry inside a row).  The number format is still computed from
    all values.
    """
    array = np.asarray(array)
    if array.ndim == 0 or array.size == 0:
        return f'[{type_name} with no dimension]\n'
    values = array.astype(np.float64)    # bool prints as 0/1, like uint8
    fmt = _LegacyFormat(values.ravel(), _OPTS['precision'])
    summarize = array.size > _OPTS['threshold']
    if array.ndim == 1:
        body = _legacy_vector(values, fmt, summarize)
    elif array.ndim == 2:
        body = _legacy_matrix(values, fmt, summarize)
    else:
        body = _legacy_slices(values, fmt, summarize)
    size = 'x'.join(str(n) for n in array.shape)
    return f'\n{body}[{type_name} of size {size}]\n'


# --------------------------------------------------------------------------
# Sparse COO tensors
# --------------------------------------------------------------------------

def _plain_body(array, dtype_name, indent):
    """The bracketed elements alone (``_tensor_str`` in torch), plus ``, size=`` when empty."""
    array = _as_printable(array, dtype_name)
    if array.size == 0:
        return '[], size=' + str(tuple(array.shape))
    summarize = array.size > _OPTS['threshold']
    shown = _summarized(array, _OPTS['edgeitems']) if summarize else array
    fmt = _ElementFormat(shown.ravel().tolist(), array.dtype.kind == 'f',
                         _OPTS['precision'], _OPTS['sci_mode'])
    return _layout(array, indent, summarize, fmt)


def format_sparse(coo, *, dtype_name, suffixes=(), default_dtype_name='float32'):
    """``repr`` of a sparse COO tensor, as torch prints one: its indices and values, then
    size, nnz, dtype (unless implicit), layout and the autograd suffixes."""
    indent = len('tensor(')
    indices = 'indices=tensor(' + _plain_body(coo.indices, 'int64', indent + 15) + ')'
    values = 'values=tensor(' + _plain_body(coo.values, dtype_name, indent + 14) + ')'
    own = ['size=' + str(tuple(coo.shape)), f'nnz={coo.indices.shape[1]}']
    if dtype_name not in (default_dtype_name,) + _IMPLICIT_DTYPES:
        own.append('dtype=dynagrad.' + dtype_name)
    own.append('layout=dynagrad.sparse_coo')
    text = 'tensor(' + indices + ',\n' + ' ' * indent + values
    # torch's _add_suffixes with force_newline: the first suffix always starts a line
    used = len(text) - text.rfind('\n') + 1
    force = True
    for suffix in own + list(suffixes):
        n = _torch_len(suffix)
        if force or used + n + 2 > _OPTS['linewidth']:
            text += ',\n' + ' ' * indent + suffix
            used = indent + n
            force = False
        else:
            text += ', ' + suffix
            used += n + 2
    return text + ')'
