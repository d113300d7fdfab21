"""The pointwise part of one LSTM or GRU time step, forward and backward: the gate
activations, the cell and hidden state updates and the states' bookkeeping, one kernel call
per step where the NumPy path makes eight to twelve ufunc calls on column slices.

The matrix products stay in ``nn/functional/rnn.py`` (NumPy's BLAS); so does the layout:
the gate pre-activations ``G`` (rows of a step, gate blocks i, f, g, o or r, z, n along
the columns) hold the sigmoid gates' pre-activations halved, so that
``sigmoid(2y) = tanh(y) / 2 + 1/2`` (no exponential that overflows, and ``tanh`` is the
vectorised rational fit of ``_math`` in float32). The kernels overwrite ``G`` with the
activations, as the NumPy path does, and its backward reads them.
"""
import numpy as np

from ._math import kernel, tanh, HALF, ONE


# tanh's overload is inlined at each call: five inlined copies in one loop made numba's SSA
# pass warn (NumbaIRAssumptionWarning, a variable of one copy out of scope). Called through
# this small kernel LLVM still inlines it, and loops of it vectorise.
@kernel
def _tanh(u):
    return tanh(u)


# The loops below are short and simple on purpose: one loop doing a step's five
# activations and its state updates together (eight arrays read or written) did not
# vectorise and took twice the NumPy path's time (51 against 25 us on a 20 x 200 step);
# tanh over the whole gate block first, then the cheap updates, took 8 us. A loop that
# writes one array at several column offsets (g[r, j], g[r, H + j], ...) or reads many
# arrays stays scalar too (LLVM cannot bound the offsets' overlap, or gives up on the
# run-time alias checks), so each loop below writes one stream: the backward went from
# 10.6 to 5.5 us per 20 x 200 step with its data in cache, 20 to 15 us from memory.
@kernel
def _lstm_step(g, gh, c_state, h_state, c_prev, tanh_c, h_out, write_h):
    """``g`` (b, 4H), the input side's pre-activations, plus ``gh`` (b, 4H), the recurrent
    product -> activations; ``c_state`` (b, H): the previous cell state, saved to
    ``c_prev`` and replaced by the new one; ``h_out`` = o tanh(c), also written to
    ``h_state`` when ``write_h`` (no projection)."""
    b, H = c_state.shape
    H2, H3, H4 = 2 * H, 3 * H, 4 * H
    flat = g.reshape(-1)
    flat_gh = gh.reshape(-1)
    for j in range(flat.size):
        flat[j] = _tanh(flat[j] + flat_gh[j])
    for r in range(b):
        for j in range(H2):             # i, f: sigmoid(2y) = tanh(y) / 2 + 1/2
            g[r, j] = HALF * g[r, j] + HALF
        for j in range(H3, H4):         # o
            g[r, j] = HALF * g[r, j] + HALF
        for j in range(H):
            c_prev[r, j] = c_state[r, j]
        for j in range(H):
            c_state[r, j] = g[r, H + j] * c_prev[r, j] + g[r, j] * g[r, H2 + j]
    flat_c = c_state.reshape(-1)
    flat_tanh_c = tanh_c.reshape(-1)
    for j in range(flat_c.size):
        flat_tanh_c[j] = _tanh(flat_c[j])
    for r in range(b):
        for j in range(H):
            h_out[r, j] = g[r, H3 + j] * tanh_c[r, j]
        if write_h:
            for j in range(H):
                h_state[r, j] = h_out[r, j]


@kernel
def _lstm_step_backward(dh, gout, dc, g, tanh_c, c_prev, dg):
    """The gates' pre-activation gradient ``dg`` (b, 4H) of one step from the gradient
    reaching the (unprojected) hidden output, ``dh`` plus ``gout`` (``gout`` empty: nothing
    to add; ``dh`` is left holding the sum), and the cell's ``dc`` (b, H), replaced by the
    previous cell's gradient."""
    b, H = dc.shape
    H2, H3 = 2 * H, 3 * H
    if gout.shape[0] > 0:
        flat_dh = dh.reshape(-1)
        flat_gout = gout.reshape(-1)
        for j in range(flat_dh.size):
            flat_dh[j] += flat_gout[j]
    for r in range(b):
        for j in range(H):              # o
            o = g[r, H3 + j]
            dg[r, H3 + j] = dh[r, j] * tanh_c[r, j] * o * (ONE - o)
        for j in range(H):              # the cell's gradient, through h = o tanh(c)
            t = tanh_c[r, j]
            dc[r, j] += dh[r, j] * g[r, H3 + j] * (ONE - t * t)
        for j in range(H):              # i
            i = g[r, j]
            dg[r, j] = dc[r, j] * g[r, H2 + j] * i * (ONE - i)
        for j in range(H):              # f
            f = g[r, H + j]
            dg[r, H + j] = dc[r, j] * c_prev[r, j] * f * (ONE - f)
        for j in range(H):              # g (tanh)
            gg = g[r, H2 + j]
            dg[r, H2 + j] = dc[r, j] * g[r, j] * (ONE - gg * gg)
        for j in range(H):              # on to the previous cell
            dc[r, j] *= g[r, H + j]


@kernel
def _gru_step(g, gh, b_hn, h_state, h_prev, hn_out, h_out):
    """``g`` (b, 3H): the input side's r, z (halved, both biases in) and n; ``gh`` (b, 3H)
    the recurrent product (r, z halved; ``b_hn`` (H,), or empty, still to add to n's).
    ``g`` becomes the activations r, z, n; ``hn_out`` keeps W_hn h + b_hn; the state
    ``h_state`` is saved to ``h_prev`` and replaced by the new h (also ``h_out``)."""
    b, H = h_state.shape
    H2 = 2 * H
    has_b = b_hn.shape[0] > 0
    for r in range(b):
        for j in range(H2):
            g[r, j] = _tanh(g[r, j] + gh[r, j])
        for j in range(H):
            rr = HALF * g[r, j] + HALF
            g[r, j] = rr
            g[r, H + j] = HALF * g[r, H + j] + HALF
            hn = gh[r, H2 + j] + b_hn[j] if has_b else gh[r, H2 + j]
            hn_out[r, j] = hn
            g[r, H2 + j] += rr * hn
        for j in range(H2, 3 * H):
            g[r, j] = _tanh(g[r, j])
        for j in range(H):
            hp = h_state[r, j]
            h_prev[r, j] = hp
            n = g[r, H2 + j]
            h = n + g[r, H + j] * (hp - n)
            h_out[r, j] = h
            h_state[r, j] = h


@kernel
def _gru_step_backward(dh, gout, g, hn, h_prev, dgi, dgh):
    """From ``dh + gout`` (the gradient reaching this step's h): the input side's and the
    recurrent side's pre-activation gradients ``dgi``, ``dgh`` (b, 3H), and ``dh`` replaced
    by the part that flows straight to the previous h (z times it; the caller adds
    ``dgh @ W_hh``)."""
    b, H = dh.shape
    H2 = 2 * H
    for r in range(b):
        for j in range(H):
            d = dh[r, j] + gout[r, j]
            rr, z, n = g[r, j], g[r, H + j], g[r, H2 + j]
            dn = d * (ONE - z) * (ONE - n * n)
            dr = dn * hn[r, j] * rr * (ONE - rr)
            dz = d * (h_prev[r, j] - n) * z * (ONE - z)
            dgi[r, j] = dr
            dgi[r, H + j] = dz
            dgi[r, H2 + j] = dn
            dgh[r, j] = dr
            dgh[r, H + j] = dz
            dgh[r, H2 + j] = dn * rr
            dh[r, j] = d * z


def lstm_step(g, gh, c_state, h_state, c_prev, tanh_c, h_out):
    """One LSTM step's pointwise part, in place (see ``_lstm_step``); every argument a
    C-contiguous 2-D block of rows; ``h_state`` None with a projection (the caller writes
    the projected h)."""
    write_h = h_state is not None
    _lstm_step(g, gh, c_state, h_state if write_h else h_out, c_prev, tanh_c, h_out, write_h)


def lstm_step_backward(dh, gout, dc, g, tanh_c, c_prev, dg):
    """``gout`` None: ``dh`` already holds the whole gradient of the step's hidden output;
    else ``dh`` is overwritten with ``dh + gout``."""
    _lstm_step_backward(dh, dh[:0] if gout is None else gout, dc, g, tanh_c, c_prev, dg)


def gru_step(g, gh, b_hn, h_state, h_prev, hn_out, h_out):
    """``b_hn`` None: no recurrent bias."""
    _gru_step(g, gh, np.empty(0, g.dtype) if b_hn is None else b_hn, h_state, h_prev, hn_out, h_out)


def gru_step_backward(dh, gout, g, hn, h_prev, dgi, dgh):
    _gru_step_backward(dh, gout, g, hn, h_prev, dgi, dgh)
