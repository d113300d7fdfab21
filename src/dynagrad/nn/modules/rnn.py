"""Recurrent layers: RNN, LSTM, GRU and their cells, PyTorch's parameters and gate order.

Speed: one layer in one direction is ONE op, ``_RecurrentLayer`` in
``dynagrad.nn.functional.rnn`` (forward and back-propagation through time on arrays, see
there). The modules here hold the parameters, check the inputs, and run the layers and
directions one after another.
"""
import math
import numbers
import warnings

from ... import ops
from ...backend import xp
from ...tensor import wrap
from ..functional.rnn import recurrent_layer, reference_layer
from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from ..utils.rnn import PackedSequence

__all__ = ['GRU', 'LSTM', 'RNN', 'GRUCell', 'LSTMCell', 'RNNBase', 'RNNCell', 'RNNCellBase']

_GATES = {'LSTM': 4, 'GRU': 3, 'RNN_TANH': 1, 'RNN_RELU': 1}
# When False, layers run as recorded per-step dynagrad ops (the slow reference path):
# a switch for measuring the fused op against it.
USE_FUSED = True


def _run_layer(mode, x, h0, c0, weights, batch_sizes, reverse):
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    if USE_FUSED:
        return recurrent_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes,
                               reverse)
    return reference_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes,
                            reverse)


def _dropout_mask(x, p):
    # drawn as PyTorch's dropout between layers draws it (bernoulli_(1 - p)), so a seeded
    # multi-layer RNN trains on the same masks as in PyTorch
    from ...ops.random import bernoulli_mask
    dt = x._data.dtype
    if p >= 1:
        return wrap(xp.zeros(x.shape, dt))
    keep = bernoulli_mask(None, 1 - p, x.shape, dt)
    return wrap(keep / dt.type(1 - p))


# ---------------------------------------------------------------------------------------
# Modules.

class RNNBase(Module):
    """Base of RNN, LSTM and GRU: parameters per layer and direction, as PyTorch names them."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError('dropout should be a number in range [0, 1] representing the '
                             'probability of an element being zeroed')
        if dropout > 0 and num_layers == 1:
            warnings.warn('dropout option adds dropout after all but last recurrent layer, so '
                          'non-zero dropout expects num_layers greater than 1, but got '
                          f'dropout={dropout} and num_layers={num_layers}')
        if not isinstance(hidden_size, int):
            raise TypeError(f'hidden_size should be of type int, got: '
                            f'{type(hidden_size).__name__}')
        if hidden_size <= 0:
            raise ValueError('hidden_size must be greater than zero')
        if num_layers <= 0:
            raise ValueError('num_layers must be greater than zero')
        if proj_size < 0:
            raise ValueError('proj_size should be a positive integer or zero to disable '
                             'projections')
        if proj_size >= hidden_size:
            raise ValueError('proj_size has to be smaller than hidden_size')
        if mode not in _GATES:
            raise ValueError(f'Unrecognized RNN mode: {mode}')
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_in = input_size if layer == 0 else real_hidden * num_directions
                suffix = '_reverse' if direction == 1 else ''
                shapes = [('weight_ih', (gate_size, layer_in)),
                          ('weight_hh', (gate_size, real_hidden))]
                if bias:
                    shapes += [('bias_ih', (gate_size,)), ('bias_hh', (gate_size,))]
                if proj_size > 0:
                    shapes += [('weight_hr', (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f'{base}_l{layer}{suffix}'
                    setattr(self, name, Parameter(ops.empty(*shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        from ...autograd.grad_mode import no_grad
        with no_grad():
            for w in self.parameters():
                w.uniform_(-stdv, stdv)

    def flatten_parameters(self):
        """A no-op: there is no cuDNN weight buffer to compact."""

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.proj_size != 0:
            s += f', proj_size={self.proj_size}'
        if self.num_layers != 1:
            s += f', num_layers={self.num_layers}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        if self.batch_first is not False:
            s += f', batch_first={self.batch_first}'
        if self.dropout != 0:
            s += f', dropout={self.dropout}'
        if self.bidirectional is not False:
            s += f', bidirectional={self.bidirectional}'
        return s

    # -- checks --------------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        if batch_sizes is None and input.dim() not in (2, 3):
            raise ValueError(f'{type(self).__name__}: Expected input to be 2D or 3D, got '
                             f'{input.dim()}D instead')
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected and batch_sizes is not None:
            raise RuntimeError(f'input must have {expected} dimensions, got {input.dim()}')
        if self.input_size != input.size(-1):
            raise RuntimeError(f'input.size(-1) must be equal to input_size. Expected '
                               f'{self.input_size}, got {input.size(-1)}')

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        out = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, out)

    def check_hidden_size(self, hx, expected_hidden_size, msg='Expected hidden size {}, got {}'):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return ops.index_select(hx, 1, permutation)

    # -- forward ---------------------------------------------------------------------------
    def forward(self, input, hx=None):
        is_lstm = self.mode == 'LSTM'
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            x, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = tuple(int(b) for b in batch_sizes_t._data)
            self.check_input(x, batch_sizes)
            B = batch_sizes[0]
        else:
            sorted_indices = unsorted_indices = None
            self.check_input(input, None)
            x = input
            if x.dim() == 2:
                unbatched = True
                x = x.unsqueeze(1)
                if hx is not None:
                    hx = self._unbatch_hx(hx, is_lstm)
            else:
                if hx is not None:
                    self._check_batched_hx(hx, is_lstm)
            if self.batch_first:
                x = x.transpose(0, 1)
            T, B = x.shape[0], x.shape[1]
            batch_sizes = (B,) * T
            x = x.reshape(T * B, x.shape[2])
        n_states = self.num_layers * num_directions
        if hx is None:
            dtype = x.dtype
            h0 = ops.zeros(n_states, B, real_hidden, dtype=dtype)
            c0 = ops.zeros(n_states, B, self.hidden_size, dtype=dtype) if is_lstm else None
        else:
            if is_lstm:
                h0, c0 = hx
                if packed:
                    h0 = self.permute_hidden(h0, sorted_indices)
                    c0 = self.permute_hidden(c0, sorted_indices)
                expected = (n_states, B, real_hidden)
                self.check_hidden_size(h0, expected, 'Expected hidden[0] size {}, got {}')
                self.check_hidden_size(c0, (n_states, B, self.hidden_size),
                                       'Expected hidden[1] size {}, got {}')
            else:
                h0, c0 = hx, None
                if packed:
                    h0 = self.permute_hidden(h0, sorted_indices)
                self.check_hidden_size(h0, (n_states, B, real_hidden))
        if len(batch_sizes) == 0:
            raise RuntimeError('Expected sequence length to be larger than 0 in RNN')

        h_states = h0.unbind(0)
        c_states = c0.unbind(0) if is_lstm else None
        hn, cn = [], []
        layer_in = x
        p = self.dropout
        for layer in range(self.num_layers):
            outs = []
            for d in range(num_directions):
                k = layer * num_directions + d
                # read as attributes, as PyTorch's _flat_weights are: a subclass may serve
                # them from elsewhere than _parameters (pyro samples them per call)
                w = [getattr(self, n) for n in self._all_weights[k]]
                if not self.bias:
                    w[2:2] = [None, None]
                if self.proj_size <= 0:
                    w.append(None)
                o, h, c = _run_layer(self.mode, layer_in, h_states[k],
                                     c_states[k] if is_lstm else None, w, batch_sizes, d == 1)
                outs.append(o)
                hn.append(h)
                cn.append(c)
            layer_in = outs[0] if num_directions == 1 else ops.cat(outs, 1)
            if p > 0 and self.training and layer < self.num_layers - 1:
                layer_in = layer_in * _dropout_mask(layer_in, p)
        out = layer_in
        h_n = ops.stack(hn, 0)
        c_n = ops.stack(cn, 0) if is_lstm else None
        if packed:
            out = PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices)
            h_n = self.permute_hidden(h_n, unsorted_indices)
            if is_lstm:
                c_n = self.permute_hidden(c_n, unsorted_indices)
        else:
            out = out.reshape(len(batch_sizes), B, out.shape[1])
            if self.batch_first:
                out = out.transpose(0, 1)
            if unbatched:
                out = out.squeeze(1)
                h_n = h_n.squeeze(1)
                if is_lstm:
                    c_n = c_n.squeeze(1)
        return (out, (h_n, c_n)) if is_lstm else (out, h_n)

    def _unbatch_hx(self, hx, is_lstm):
        if is_lstm:
            h, c = hx
            if h.dim() != 2 or c.dim() != 2:
                raise RuntimeError('For unbatched 2-D input, hx and cx should also be 2-D but '
                                   f'got ({h.dim()}-D, {c.dim()}-D) tensors')
            return h.unsqueeze(1), c.unsqueeze(1)
        if hx.dim() != 2:
            raise RuntimeError('For unbatched 2-D input, hx should also be 2-D but got '
                               f'{hx.dim()}-D tensor')
        return hx.unsqueeze(1)

    def _check_batched_hx(self, hx, is_lstm):
        if is_lstm:
            h, c = hx
            if h.dim() != 3 or c.dim() != 3:
                raise RuntimeError('For batched 3-D input, hx and cx should also be 3-D but '
                                   f'got ({h.dim()}-D, {c.dim()}-D) tensors')
        elif hx.dim() != 3:
            raise RuntimeError('For batched 3-D input, hx should also be 3-D but got '
                               f'{hx.dim()}-D tensor')


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or ReLU)."""

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        if len(args) > 3:
            self_nl = args[3]
            args = args[:3] + args[4:]
        else:
            self_nl = kwargs.pop('nonlinearity', 'tanh')
        if self_nl == 'tanh':
            mode = 'RNN_TANH'
        elif self_nl == 'relu':
            mode = 'RNN_RELU'
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nl}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nl


class LSTM(RNNBase):
    """LSTM with PyTorch's gate order (i, f, g, o) and optional projection (``proj_size``)."""

    def __init__(self, *args, **kwargs):
        super().__init__('LSTM', *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)


class GRU(RNNBase):
    """GRU with PyTorch's gates (r, z, n) and ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def __init__(self, *args, **kwargs):
        if 'proj_size' in kwargs:
            raise ValueError('proj_size argument is only supported for LSTM, not RNN or GRU')
        super().__init__('GRU', *args, **kwargs)


# ---------------------------------------------------------------------------------------
# Cells: one step, run by the same fused op over a one-step sequence.

class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ops.empty(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(ops.empty(num_chunks * hidden_size, hidden_size,
                                             dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ops.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(ops.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter('bias_ih', None)
            self.register_parameter('bias_hh', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        from ...autograd.grad_mode import no_grad
        with no_grad():
            for w in self.parameters():
                w.uniform_(-stdv, stdv)

    def extra_repr(self):
        s = f'{self.input_size}, {self.hidden_size}'
        if self.bias is not True:
            s += f', bias={self.bias}'
        nl = getattr(self, 'nonlinearity', 'tanh')
        if nl != 'tanh':
            s += f', nonlinearity={nl}'
        return s

    def _prepare(self, input, hx):
        if input.dim() not in (1, 2):
            raise ValueError(f'{type(self).__name__}: Expected input to be 1D or 2D, got '
                             f'{input.dim()}D instead')
        if hx is not None:
            for h in (hx if isinstance(hx, tuple) else (hx,)):
                if h.dim() not in (1, 2):
                    raise ValueError(f'{type(self).__name__}: Expected hidden to be 1D or 2D, '
                                     f'got {h.dim()}D instead')
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) \
                    else hx.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(f'input has inconsistent input_size: got {input.size(1)} '
                               f'expected {self.input_size}')
        B = input.size(0)
        if hx is None:
            z = ops.zeros(B, self.hidden_size, dtype=input.dtype)
            hx = (z, z) if isinstance(self, LSTMCell) else z
        for k, h in enumerate(hx if isinstance(hx, tuple) else (hx,)):
            if h.size(0) != B:
                raise RuntimeError(f"Input batch size {B} doesn't match hidden{k} batch size "
                                   f'{h.size(0)}')
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f'hidden{k} has inconsistent hidden_size: got {h.size(1)}, '
                                   f'expected {self.hidden_size}')
        return input, hx, batched

    def _step(self, mode, input, h, c):
        w = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, None)
        B = input.shape[0]
        return _run_layer(mode, input, h, c, w, (B,), False)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity='tanh', device=None,
                 dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity == 'tanh':
            mode = 'RNN_TANH'
        elif self.nonlinearity == 'relu':
            mode = 'RNN_RELU'
        else:
            raise RuntimeError(f'Unknown nonlinearity: {self.nonlinearity}')
        input, hx, batched = self._prepare(input, hx)
        h = self._step(mode, input, hx, None)[1]
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx)
        _, h, c = self._step('LSTM', input, hx[0], hx[1])
        if not batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._prepare(input, hx)
        h = self._step('GRU', input, hx, None)[1]
        return h if batched else h.squeeze(0)
