"""The fused recurrent layer op behind nn.RNN, nn.LSTM and nn.GRU (``_RecurrentLayer``).

Speed: one layer in one direction is ONE op (``_RecurrentLayer``). Its forward runs the
whole sequence on NumPy arrays: the input projection of every time step is one big matrix
multiply before the time loop, and each step computes all its gates with one fused matrix
multiply of the recurrent state. The gate activations are kept, and the backward runs
back-propagation through time on arrays in one call; the weight gradients are again one
big matrix multiply each, after the loop. Under ``create_graph=True`` the backward re-runs
the layer with recorded dynagrad ops (``reference_layer``) and differentiates that, so
double backward works.

The sequence is held time-major and *packed*: a 2-D array of rows, step ``t`` owning
``batch_sizes[t]`` consecutive rows (``batch_sizes`` non-increasing). A padded batch is the
case where every step has the whole batch; a ``PackedSequence`` is used as it is.

The sigmoid gates use ``sigmoid(x) = 0.5 * tanh(x / 2) + 0.5``: the 1/2 is folded into the
weight rows of those gates, so one ``tanh`` over a whole gate block, a multiply and an add
activate all the gates of a step at once. With numba (``backend.native_kernel``) a step's
pointwise part (activations, state updates and the saved copies, forward; the gates'
gradients, backward) is one kernel call instead (``dynagrad.native.rnn``); the matrix
products stay here.
"""
import numpy as np

from ... import ops
from ...autograd.function import Op
from ...autograd.autocast import autocast_args, autocast_state
from ...backend import native_kernel, xp
from .linear import linear as _linear, _SMALL_ROWS, _SMALL_WORK

_F64 = np.dtype(np.float64)

__all__ = []   # recurrent_layer, recurrent_stack: used by nn.RNN and the top-level forms


def _offsets(batch_sizes):
    offs = [0]
    for b in batch_sizes:
        offs.append(offs[-1] + b)
    return offs


class _Scales:
    """Per-gate-row scale and shift turning ``tanh`` into the sigmoid gates, by mode and size."""
    cache = {}

    @classmethod
    def get(cls, mode, H, dtype):
        key = (mode, H, dtype)
        v = cls.cache.get(key)
        if v is None:
            if mode == 'LSTM':
                s = xp.array([0.5] * (2 * H) + [1.0] * H + [0.5] * H, dtype)
                shift = xp.array([0.5] * (2 * H) + [0.0] * H + [0.5] * H, dtype)
            else:  # GRU: r, z are sigmoid (the n gate is handled apart)
                s = xp.array([0.5] * (2 * H), dtype)
                shift = None
            v = cls.cache[key] = (s, shift, s * s)
        return v


# ---------------------------------------------------------------------------------------
# The fused layer op.

class _RecurrentLayer(Op):
    """One layer, one direction, over a packed sequence.

    Inputs: ``x`` (N, I), ``h0`` (B, H_out), ``c0`` (B, H) or None, ``w_ih``, ``w_hh``,
    ``b_ih``, ``b_hh`` (or None), ``w_hr`` (LSTM projection) or None.
    Outputs: ``output`` (N, H_out), ``h_n`` (B, H_out) and, for LSTM, ``c_n`` (B, H).
    """
    widens_half = True
    node_name = 'RecurrentLayerBackward0'

    def forward(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode='LSTM', batch_sizes=(),
                reverse=False):
        self.mode, self.batch_sizes, self.reverse = mode, batch_sizes, reverse
        run = _FORWARDS[mode]
        return run(self, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse)

    def backward(self, *grads):
        if self._as_tensors:
            return self._backward_by_rerun(grads)
        return _BACKWARDS[self.mode](self, grads)

    def _backward_by_rerun(self, grads):
        """create_graph=True: differentiate the layer re-run with recorded ops."""
        from ...autograd import grad as autograd_grad
        saved = self.saved_tensors
        inputs = saved[:8]
        needs = self.needs_input_grad
        wanted = [i for i in range(8) if needs[i] and inputs[i] is not None]
        outs = reference_layer(self.mode, *inputs, self.batch_sizes, self.reverse)
        pairs = [(o, g) for o, g in zip(outs, grads) if o is not None and g is not None]
        got = autograd_grad([o for o, _ in pairs], [inputs[i] for i in wanted],
                            [g for _, g in pairs], create_graph=True, allow_unused=True)
        result = [None] * 8
        for i, g in zip(wanted, got):
            result[i] = g
        return tuple(result)


def _native_step(name, G, *states):
    """The native kernel of a step's pointwise part, where the states it writes in place
    share the gates' dtype (else the NumPy path)."""
    if any(s.dtype != G.dtype for s in states):
        return None
    return native_kernel(name, G)


def _recurrent_product(G, rows, n_in, n_out):
    """How a step's recurrent product of ``rows`` rows runs: ``product(x, w, out)`` is
    ``x @ w`` for a C-contiguous (in, out) ``w``, into ``out`` (or a new array when None).
    The few-row kernel (``dynagrad.native.linalg.matmul_rows``) where it takes it, else
    BLAS. One thread, float32, LSTM of width 200 on 20 rows (the weight laid out once per
    sequence, kept in cache between steps): the layer's forward 8.5 ms against 11.4 with
    the packed (out, in) kernel and 11.8 with OpenBLAS's product of the same layout.
    float64 keeps BLAS (the kernel measured no faster there)."""
    if rows <= _SMALL_ROWS and rows * n_in * n_out <= _SMALL_WORK and G.dtype != _F64:
        kernel = native_kernel('matmul_rows', G)
        if kernel is not None:
            return kernel
    return _blas_product


def _blas_product(x, w, out):
    return xp.matmul(x, w, out=out)


def _order(T, reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _first_step(node):
    """The time step the backward reaches last, where the gradient flowing on through the
    recurrent weights is h0's alone: -1 (none) when h0 needs it, else that step, whose
    product with the recurrent weights is skipped."""
    if node.needs_input_grad[1]:
        return -1
    return len(node.batch_sizes) - 1 if node.reverse else 0


def _lstm_forward(node, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    H = w_hh.shape[0] // 4
    dt = x.dtype
    s, shift, _ = _Scales.get('LSTM', H, dt)
    sc = s[:, None]
    # All time steps' input projections at once, the sigmoid rows pre-scaled by 1/2.
    G = x @ (w_ih * sc).T
    if b_ih is not None:
        G += (b_ih + b_hh) * s
    whr_t = xp.ascontiguousarray(w_hr.T) if w_hr is not None else None
    N = x.shape[0]
    B = h0.shape[0]
    Hout = h0.shape[1]
    out = xp.empty((N, Hout), dt)
    C = xp.empty((N, H), dt)       # cell state after each step
    TC = xp.empty((N, H), dt)      # tanh of it
    Hprev = xp.empty((N, Hout), dt)
    Cprev = xp.empty((N, H), dt)
    Hraw = xp.empty((N, H), dt) if w_hr is not None else None
    h = h0.copy()
    c = c0.copy()
    offs = _offsets(batch_sizes)
    H2, H3 = 2 * H, 3 * H
    native = _native_step('lstm_step', G, h, c)
    recurrent = xp.empty((B, 4 * H), dt) if native is not None else None
    product = _recurrent_product(G, B, Hout, 4 * H) if native is not None else None
    whh_t = xp.ascontiguousarray((w_hh * sc).T)
    for t in _order(len(batch_sizes), reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        hp = h[:b] if b != B else h
        cp = c[:b] if b != B else c
        Hprev[o0:o1] = hp
        g = G[o0:o1]
        if native is not None:
            # the recurrent product into one reused buffer, then the sum with the input
            # side, activations, c, tanh(c), h, and the states, in one call
            gh = recurrent[:b] if b != B else recurrent
            product(hp, whh_t, gh)
            if whr_t is None:
                native(g, gh, cp, hp, Cprev[o0:o1], TC[o0:o1], out[o0:o1])
            else:
                native(g, gh, cp, None, Cprev[o0:o1], TC[o0:o1], Hraw[o0:o1])
                xp.matmul(Hraw[o0:o1], whr_t, out=out[o0:o1])
                hp[...] = out[o0:o1]
            continue
        g += hp @ whh_t
        Cprev[o0:o1] = cp
        xp.tanh(g, out=g)
        g *= s
        g += shift
        ct = C[o0:o1]
        xp.multiply(g[:, H:H2], cp, out=ct)
        ct += g[:, :H] * g[:, H2:H3]
        tc = TC[o0:o1]
        xp.tanh(ct, out=tc)
        if whr_t is None:
            ht = out[o0:o1]
            xp.multiply(g[:, H3:], tc, out=ht)
        else:
            hr = Hraw[o0:o1]
            xp.multiply(g[:, H3:], tc, out=hr)
            ht = out[o0:o1]
            xp.matmul(hr, whr_t, out=ht)
        hp[...] = ht
        cp[...] = ct
    node.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, G, TC, Hprev, Cprev, Hraw)
    return out, h, c


def _lstm_backward(node, grads):
    gout, gh, gc = grads
    x, h0, _, w_ih, w_hh, b_ih, _, w_hr, G, TC, Hprev, Cprev, Hraw = node.saved_tensors
    needs = node.needs_input_grad
    H = w_hh.shape[0] // 4
    H2, H3 = 2 * H, 3 * H
    dt = G.dtype
    N = G.shape[0]
    B = h0.shape[0]
    dG = xp.empty((N, 4 * H), dt)
    dh = xp.array(gh, dt, copy=True)
    dc = xp.array(gc, dt, copy=True)
    dHout = xp.empty((N, dh.shape[1]), dt) if w_hr is not None else None
    offs = _offsets(node.batch_sizes)
    native = _native_step('lstm_step_backward', G, dh, dc)
    if native is not None:
        gout = xp.asarray(gout, dt, order='C')
        product = _recurrent_product(G, B, 4 * H, w_hh.shape[1])
        whh_c = xp.ascontiguousarray(w_hh)
    else:
        _, shift, s2 = _Scales.get('LSTM', H, dt)
        # Gate derivatives for the whole sequence at once: sigmoid a(1-a) = 1/4 - (a -
        # 1/2)^2, tanh 1 - a^2, i.e. s^2 - (a - shift)^2 with the scales of the forward.
        D = G - shift
        D *= D
        xp.subtract(s2, D, out=D)
        OT = G[:, H3:] * (1 - TC * TC)  # d c from d h: o * (1 - tanh(c)^2)
    first = _first_step(node)
    for t in _order(len(node.batch_sizes), not node.reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        dht = dh[:b] if b != B else dh
        dct = dc[:b] if b != B else dc
        if native is not None:
            dg = dG[o0:o1]
            if w_hr is None:
                native(dht, gout[o0:o1], dct, G[o0:o1], TC[o0:o1], Cprev[o0:o1], dg)
            else:
                dht += gout[o0:o1]
                dHout[o0:o1] = dht
                native(dht @ w_hr, None, dct, G[o0:o1], TC[o0:o1], Cprev[o0:o1], dg)
            if t != first:
                product(dg, whh_c, dht)
            continue
        dht += gout[o0:o1]
        if w_hr is not None:
            dHout[o0:o1] = dht
            dhr = dht @ w_hr
        else:
            dhr = dht
        g = G[o0:o1]
        dg = dG[o0:o1]
        xp.multiply(dhr, TC[o0:o1], out=dg[:, H3:])
        dct += dhr * OT[o0:o1]
        xp.multiply(dct, g[:, H2:H3], out=dg[:, :H])
        xp.multiply(dct, Cprev[o0:o1], out=dg[:, H:H2])
        xp.multiply(dct, g[:, :H], out=dg[:, H2:H3])
        dg *= D[o0:o1]
        dct *= g[:, H:H2]
        if t != first:
            xp.matmul(dg, w_hh, out=dht)
    gx = dG @ w_ih if needs[0] else None
    gw_ih = dG.T @ x if needs[3] else None
    gw_hh = dG.T @ Hprev if needs[4] else None
    gb = dG.sum(0) if b_ih is not None and (needs[5] or needs[6]) else None
    gw_hr = dHout.T @ Hraw if w_hr is not None and needs[7] else None
    return gx, dh if needs[1] else None, dc, gw_ih, gw_hh, gb, gb, gw_hr


def _gru_forward(node, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    H = w_hh.shape[0] // 3
    H2 = 2 * H
    dt = x.dtype
    s, _, _ = _Scales.get('GRU', H, dt)
    sc = xp.concatenate([s, xp.ones(H, dt)])
    G = x @ (w_ih * sc[:, None]).T   # r, z rows scaled by 1/2; n as is
    if b_ih is not None:
        bias = b_ih.copy()
        bias[:H2] += b_hh[:H2]       # r and z take both biases here; b_hn stays inside r*(...)
        G += bias * sc
        bhh = b_hh * sc
        bhh[:H2] = 0
    else:
        bhh = None
    N = x.shape[0]
    B = h0.shape[0]
    out = xp.empty((N, H), dt)
    Hprev = xp.empty((N, H), dt)
    HN = xp.empty((N, H), dt)  # W_hn h + b_hn, per step
    h = h0.copy()
    offs = _offsets(batch_sizes)
    native = _native_step('gru_step', G, h)
    product = _recurrent_product(G, B, H, 3 * H) if native is not None else None
    whh_t = xp.ascontiguousarray((w_hh * sc[:, None]).T)
    b_hn = xp.ascontiguousarray(bhh[H2:]) if native is not None and bhh is not None else None
    for t in _order(len(batch_sizes), reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        hp = h[:b] if b != B else h
        if native is not None:
            gh = product(hp, whh_t, None)
            native(G[o0:o1], gh, b_hn, hp, Hprev[o0:o1], HN[o0:o1], out[o0:o1])
            continue
        Hprev[o0:o1] = hp
        gh = hp @ whh_t
        if bhh is not None:
            gh += bhh
        g = G[o0:o1]
        rz = g[:, :H2]
        rz += gh[:, :H2]
        xp.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        hn = HN[o0:o1]
        hn[...] = gh[:, H2:]
        n = g[:, H2:]
        n += g[:, :H] * hn
        xp.tanh(n, out=n)
        ht = out[o0:o1]
        xp.subtract(hp, n, out=ht)
        ht *= g[:, H:H2]
        ht += n
        hp[...] = ht
    node.save_for_backward(x, h0, None, w_ih, w_hh, b_ih, b_hh, None, G, HN, Hprev)
    return out, h


def _gru_backward(node, grads):
    gout, gh = grads[0], grads[1]
    x, h0, _, w_ih, w_hh, b_ih, b_hh, _, G, HN, Hprev = node.saved_tensors
    needs = node.needs_input_grad
    H = w_hh.shape[0] // 3
    H2 = 2 * H
    dt = G.dtype
    N = G.shape[0]
    B = h0.shape[0]
    dGi = xp.empty((N, 3 * H), dt)
    dGh = xp.empty((N, 3 * H), dt)
    dh = xp.array(gh, dt, copy=True)
    offs = _offsets(node.batch_sizes)
    native = _native_step('gru_step_backward', G, dh)
    if native is not None:
        gout = xp.asarray(gout, dt, order='C')
        product = _recurrent_product(G, B, 3 * H, H)
        whh_c = xp.ascontiguousarray(w_hh)
    else:
        # Whole-sequence factors: r(1-r), z(1-z), 1-n^2, 1-z, h_prev-n.
        R, Z, Nn = G[:, :H], G[:, H:H2], G[:, H2:]
        Drz = G[:, :H2] * (1 - G[:, :H2])
        Dn = 1 - Nn * Nn
        OneZ = 1 - Z
        HmN = Hprev - Nn
    first = _first_step(node)
    for t in _order(len(node.batch_sizes), not node.reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        dht = dh[:b] if b != B else dh
        if native is not None:
            dgh = dGh[o0:o1]
            native(dht, gout[o0:o1], G[o0:o1], HN[o0:o1], Hprev[o0:o1], dGi[o0:o1], dgh)
            if t != first:
                dht += product(dgh, whh_c, None)
            continue
        dht += gout[o0:o1]
        di = dGi[o0:o1]
        dnp = di[:, H2:]
        xp.multiply(dht, OneZ[o0:o1], out=dnp)
        dnp *= Dn[o0:o1]                                   # d n_pre
        xp.multiply(dnp, HN[o0:o1], out=di[:, :H])         # d r
        xp.multiply(dht, HmN[o0:o1], out=di[:, H:H2])      # d z
        di[:, :H2] *= Drz[o0:o1]                           # d r_pre, d z_pre
        dgh = dGh[o0:o1]
        dgh[:, :H2] = di[:, :H2]
        xp.multiply(dnp, R[o0:o1], out=dgh[:, H2:])
        dht *= Z[o0:o1]
        if t != first:
            dht += dgh @ w_hh
    gx = dGi @ w_ih if needs[0] else None
    gw_ih = dGi.T @ x if needs[3] else None
    gw_hh = dGh.T @ Hprev if needs[4] else None
    gb_ih = dGi.sum(0) if b_ih is not None and needs[5] else None
    gb_hh = dGh.sum(0) if b_hh is not None and needs[6] else None
    return gx, dh if needs[1] else None, None, gw_ih, gw_hh, gb_ih, gb_hh, None


def _rnn_forward(node, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    relu = node.mode == 'RNN_RELU'
    dt = x.dtype
    A = x @ w_ih.T
    if b_ih is not None:
        A += b_ih + b_hh
    whh_t = xp.ascontiguousarray(w_hh.T)
    N, B = x.shape[0], h0.shape[0]
    Hprev = xp.empty((N, h0.shape[1]), dt)
    h = h0.copy()
    offs = _offsets(batch_sizes)
    for t in _order(len(batch_sizes), reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        hp = h[:b] if b != B else h
        Hprev[o0:o1] = hp
        a = A[o0:o1]
        a += hp @ whh_t
        if relu:
            xp.maximum(a, 0, out=a)
        else:
            xp.tanh(a, out=a)
        hp[...] = a
    node.save_for_backward(x, h0, None, w_ih, w_hh, b_ih, b_hh, None, Hprev)
    node._activations = A
    return A, h


def _rnn_backward(node, grads):
    gout, gh = grads[0], grads[1]
    x, h0, _, w_ih, w_hh, b_ih, _, _, Hprev = node.saved_tensors
    A = node._activations
    needs = node.needs_input_grad
    B = h0.shape[0]
    D = (A > 0).astype(A.dtype) if node.mode == 'RNN_RELU' else 1 - A * A
    dA = xp.empty_like(A)
    dh = xp.array(gh, A.dtype, copy=True)
    offs = _offsets(node.batch_sizes)
    for t in _order(len(node.batch_sizes), not node.reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        dht = dh[:b] if b != B else dh
        da = dA[o0:o1]
        xp.add(dht, gout[o0:o1], out=da)
        da *= D[o0:o1]
        xp.matmul(da, w_hh, out=dht)
    gx = dA @ w_ih if needs[0] else None
    gw_ih = dA.T @ x if needs[3] else None
    gw_hh = dA.T @ Hprev if needs[4] else None
    gb = dA.sum(0) if b_ih is not None and (needs[5] or needs[6]) else None
    return gx, dh, None, gw_ih, gw_hh, gb, gb, None


_FORWARDS = {'LSTM': _lstm_forward, 'GRU': _gru_forward, 'RNN_TANH': _rnn_forward,
             'RNN_RELU': _rnn_forward}
_BACKWARDS = {'LSTM': _lstm_backward, 'GRU': _gru_backward, 'RNN_TANH': _rnn_backward,
              'RNN_RELU': _rnn_backward}
_NODE_NAMES = {'LSTM': 'LstmLayerBackward0', 'GRU': 'GruLayerBackward0',
               'RNN_TANH': 'RnnTanhLayerBackward0', 'RNN_RELU': 'RnnReluLayerBackward0'}


def recurrent_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """One fused layer (see ``_RecurrentLayer``): ``(output, h_n, c_n or None)``."""
    if autocast_state.active and mode != 'GRU':   # PyTorch's mkldnn_rnn_layer: lower
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = autocast_args(
            'lower', x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr)
    outs = _RecurrentLayer.named(_NODE_NAMES[mode]).apply(
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode=mode, batch_sizes=batch_sizes,
        reverse=reverse)
    return outs if mode == 'LSTM' else (outs[0], outs[1], None)


# ---------------------------------------------------------------------------------------
# The same layer with recorded ops: the create_graph fallback and the unfused reference.

def _cell(mode, xw, hp, cp, w_hh, b_hh, w_hr):
    """One step given the input projection ``xw`` (biases of the input side included)."""
    gh = _linear(hp, w_hh, b_hh)
    if mode == 'LSTM':
        gates = xw + gh
        i, f, g, o = gates.chunk(4, 1)
        c = f.sigmoid() * cp + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr is not None:
            h = _linear(h, w_hr)
        return h, c
    if mode == 'GRU':
        xr, xz, xn = xw.chunk(3, 1)
        hr, hz, hn = gh.chunk(3, 1)
        r = (xr + hr).sigmoid()
        z = (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return n + z * (hp - n), None
    a = xw + gh
    return (a.relu() if mode == 'RNN_RELU' else a.tanh()), None


def reference_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    xw = _linear(x, w_ih, b_ih)
    offs = _offsets(batch_sizes)
    h, c = h0, c0
    B = h0.shape[0]
    outs = [None] * len(batch_sizes)
    for t in _order(len(batch_sizes), reverse):
        o0, o1 = offs[t], offs[t + 1]
        b = o1 - o0
        if b == B:
            h, c = _cell(mode, xw[o0:o1], h, c, w_hh, b_hh, w_hr)
            outs[t] = h
            continue
        hn, cn = _cell(mode, xw[o0:o1], h[:b], c[:b] if c is not None else None,
                       w_hh, b_hh, w_hr)
        outs[t] = hn
        h = ops.cat([hn, h[b:]], 0)
        if c is not None:
            c = ops.cat([cn, c[b:]], 0)
    return ops.cat(outs, 0), h, c


# ---------------------------------------------------------------------------------------
# A stack of layers from flat weights: the driver behind torch.lstm / gru / rnn_tanh /
# rnn_relu at top level.

_WEIGHTS_PER_LAYER = {True: 4, False: 2}


def _split_params(mode, params, has_biases, num_layers, num_directions):
    """PyTorch's flat parameter list -> one (w_ih, w_hh, b_ih, b_hh, w_hr) per layer and
    direction; an LSTM with a projection has one weight more per group (``w_hr``)."""
    params = list(params)
    groups = num_layers * num_directions
    per = _WEIGHTS_PER_LAYER[bool(has_biases)]
    if mode == 'LSTM' and len(params) == groups * (per + 1):
        per += 1
    if len(params) != groups * per:
        raise RuntimeError(f'{mode.lower()}: expected {groups * per} parameters for '
                           f'num_layers={num_layers}, bidirectional={num_directions == 2}, '
                           f'has_biases={bool(has_biases)}, but got {len(params)}')
    out = []
    for k in range(groups):
        g = params[k * per:(k + 1) * per]
        w_ih, w_hh = g[0], g[1]
        b_ih, b_hh = (g[2], g[3]) if has_biases else (None, None)
        w_hr = g[-1] if per in (3, 5) else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def recurrent_stack(mode, x, batch_sizes, h0, c0, params, has_biases, num_layers, dropout,
                    train, bidirectional):
    """Run ``num_layers`` layers (both directions when ``bidirectional``) over the packed
    sequence ``x`` (rows of the time steps, ``batch_sizes`` per step); ``h0`` / ``c0`` are
    ``(num_layers * num_directions, B, H)``. Returns ``(output, h_n, c_n or None)``.
    Dropout (probability ``dropout``, in training) applies between layers, as PyTorch's."""
    from .dropout import dropout as _dropout
    num_directions = 2 if bidirectional else 1
    weights = _split_params(mode, params, has_biases, num_layers, num_directions)
    if len(batch_sizes) == 0:
        raise RuntimeError('Expected sequence length to be larger than 0 in RNN')
    h_states = h0.unbind(0)
    c_states = c0.unbind(0) if c0 is not None else None
    hn, cn = [], []
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(num_directions):
            k = layer * num_directions + d
            o, h, c = recurrent_layer(mode, layer_in, h_states[k],
                                      c_states[k] if c_states is not None else None,
                                      *weights[k], tuple(batch_sizes), d == 1)
            outs.append(o)
            hn.append(h)
            cn.append(c)
        layer_in = outs[0] if num_directions == 1 else ops.cat(outs, 1)
        if dropout > 0 and train and layer < num_layers - 1:
            layer_in = _dropout(layer_in, dropout, True)
    h_n = ops.stack(hn, 0)
    c_n = ops.stack(cn, 0) if c0 is not None else None
    return layer_in, h_n, c_n
