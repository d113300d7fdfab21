"""L-BFGS (limited-memory BFGS), as PyTorch runs it: one parameter group, a closure that
re-evaluates the loss, an optional strong-Wolfe line search (cubic interpolation, after
minFunc). The parameters are handled as one flat vector."""
import math

from ..autograd.grad_mode import enable_grad, no_grad
from ..backend import xp
from ..tensor import Tensor, bump_version
from .optimizer import Optimizer, _scalar, _state_tensor
from .sgd import _check_lr


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search for a step t along d meeting the strong Wolfe conditions.

    Returns (loss, flat gradient, t, number of function evaluations)."""
    d_norm = float(xp.abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = float(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing phase
    while ls_iter < max_ls:
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_old = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = t_old, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom phase
    insuf_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # keep away from the bracket's ends unless progress stalls
        bmax, bmin = max(bracket), min(bracket)
        eps = 0.1 * (bmax - bmin)
        if min(bmax - t, t - bmin) < eps:
            if insuf_progress or t >= bmax or t <= bmin:
                t = bmax - eps if abs(t - bmax) < abs(t - bmin) else bmin + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = float(g_new @ d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], ls_func_evals


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def _num(x):
    return float(x._data) if isinstance(x, Tensor) else x


class LBFGS(Optimizer):
    _state_matches_param_shapes = False

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]['params']

    def __setstate__(self, state):
        super().__setstate__(state)
        self._params = self.param_groups[0]['params']

    def _gather_flat_grad(self):
        return xp.concatenate([
            p.grad._data.ravel() if p.grad is not None else xp.zeros(p._data.size, p._data.dtype)
            for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            bump_version(p, 'optimizer.step')
            offset += n

    def _set_param(self, arrays):
        for p, a in zip(self._params, arrays):
            p._data[...] = a
            bump_version(p, 'optimizer.step')

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):
        """One call runs up to max_iter L-BFGS iterations; returns the first loss."""
        group = self.param_groups[0]
        lr = _scalar(group['lr'])
        max_iter, max_eval = group['max_iter'], group['max_eval']
        tolerance_grad, tolerance_change = group['tolerance_grad'], group['tolerance_change']
        line_search_fn, history_size = group['line_search_fn'], group['history_size']
        if line_search_fn is not None and line_search_fn != 'strong_wolfe':
            raise RuntimeError("only 'strong_wolfe' is supported")

        state = self.state[self._params[0]]
        state.setdefault('func_evals', 0)
        state.setdefault('n_iter', 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state['func_evals'] += 1
        flat_grad = self._gather_flat_grad()
        opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
        if opt_cond:    # already at an optimum
            return orig_loss

        d = _arr(state.get('d'))
        t = _num(state.get('t'))
        old_dirs = [_arr(v) for v in state.get('old_dirs') or []]
        old_stps = [_arr(v) for v in state.get('old_stps') or []]
        ro = [_num(v) for v in state.get('ro') or []]
        H_diag = _num(state.get('H_diag'))
        prev_flat_grad = _arr(state.get('prev_flat_grad'))
        if prev_flat_grad is not None:
            prev_flat_grad = prev_flat_grad.copy()
        prev_loss = state.get('prev_loss')
        al = [None if v is None else _num(v) for v in state['al']] if 'al' in state else None

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state['n_iter'] += 1
            # the descent direction
            if state['n_iter'] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y @ s)
                if ys > 1e-10:   # update the memory
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y @ y)
                # two-loop recursion for H^-1 times the negative gradient
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = float(old_stps[i] @ q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = float(old_dirs[i] @ r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            # the step length
            if state['n_iter'] == 1:
                t = min(1.0, 1.0 / float(xp.abs(flat_grad).sum())) * lr
            else:
                t = lr
            gtd = float(flat_grad @ d)
            if gtd > -tolerance_change:   # directional derivative below tolerance
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = [p._data.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate unless this is the last iteration
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state['func_evals'] += ls_func_evals
            # stopping conditions
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        dtype = self._params[0]._data.dtype
        scalar = (lambda v: _state_tensor(xp.asarray(v, dtype)))
        if al is not None:      # PyTorch adds it during the first step's second iteration
            state['al'] = [None if v is None else scalar(v) for v in al]
        state['d'] = None if d is None else _state_tensor(d)
        state['t'] = t
        state['old_dirs'] = [_state_tensor(v) for v in old_dirs or []]
        state['old_stps'] = [_state_tensor(v) for v in old_stps or []]
        state['ro'] = [scalar(v) for v in ro or []]
        state['H_diag'] = H_diag if H_diag is None or isinstance(H_diag, int) else scalar(H_diag)
        state['prev_flat_grad'] = None if prev_flat_grad is None else _state_tensor(
            prev_flat_grad)
        state['prev_loss'] = prev_loss
        return orig_loss
