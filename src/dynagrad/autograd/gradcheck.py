"""Finite-difference checks of gradients (``gradcheck``) and of second derivatives."""
import warnings

import numpy as np

from ..backend import xp

from ..tensor import Tensor, wrap

__all__ = ['gradcheck', 'gradgradcheck', 'GradcheckError']


class GradcheckError(RuntimeError):
    pass


def _tensors(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _differentiable_outputs(outputs, need_grad=True):
    # Outputs that do not require grad (an integer result, a value the op does not
    # differentiate) are left out, as torch's gradcheck leaves them out.
    return [o for o in outputs if hasattr(o, '_data') and o._data.dtype.kind == 'f'
            and (o._requires_grad or not need_grad)]


def _numerical_jacobians(func, inputs, wrt, outputs, eps):
    """J[o][i] has shape (output numel, input numel), by central differences."""
    # Inputs are perturbed through their arrays (no version bump), and func runs with grad
    # mode as the caller has it, because gradgradcheck's func itself calls autograd.grad.
    n_outputs = len(outputs)
    jac = [[None] * len(wrt) for _ in range(n_outputs)]
    for col, i in enumerate(wrt):
        data = inputs[i]._data
        flat_n = data.size
        columns = [[] for _ in range(n_outputs)]
        for k in range(flat_n):
            idx = xp.unravel_index(k, data.shape)
            orig = data[idx].item()
            data[idx] = orig + eps
            plus = [o._data.astype(np.float64).ravel() for o in
                    _differentiable_outputs(_tensors(func(*inputs)))]
            data[idx] = orig - eps
            minus = [o._data.astype(np.float64).ravel() for o in
                     _differentiable_outputs(_tensors(func(*inputs)))]
            data[idx] = orig
            for j in range(n_outputs):
                columns[j].append((plus[j] - minus[j]) / (2 * eps))
        for j in range(n_outputs):
            jac[j][col] = (xp.stack(columns[j], axis=1) if columns[j]
                           else xp.zeros((outputs[j]._data.size, 0)))
    return jac


def _forward_jacobians(func, inputs, wrt, outputs):
    """J[o][i] by forward mode: one dual pass per input element, a unit tangent each."""
    from . import forward_ad as fw
    jac = [[xp.zeros((o._data.size, inputs[i]._data.size)) for i in wrt] for o in outputs]
    for col, i in enumerate(wrt):
        data = inputs[i]._data
        for k in range(data.size):
            unit = xp.zeros(data.shape, data.dtype)
            unit.reshape(-1)[k] = 1
            with fw.dual_level():
                args = list(inputs)
                args[i] = fw.make_dual(inputs[i].detach(), wrap(unit))
                outs = _differentiable_outputs(_tensors(func(*args)), need_grad=False)
                for j, o in enumerate(outs):
                    t = fw.unpack_dual(o).tangent
                    if t is not None:
                        jac[j][col][:, k] = t._data.reshape(-1)
    return jac


def _analytical_jacobians(outputs, inputs, wrt):
    from . import grad
    jac = []
    for o in outputs:
        rows = [xp.zeros((o._data.size, inputs[i]._data.size)) for i in wrt]
        for m in range(o._data.size):
            seed = xp.zeros(o._data.shape, o._data.dtype)
            seed.flat[m] = 1
            g = wrap(seed)
            grads = grad((o,), [inputs[i] for i in wrt], (g,), retain_graph=True,
                         allow_unused=True)
            for col, gi in enumerate(grads):
                if gi is not None:
                    rows[col][m] = gi._data.astype(np.float64).ravel()
        jac.append(rows)
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Compare the gradients of ``func`` at ``inputs`` with central finite differences."""
    inputs = _tensors(inputs)
    wrt = [i for i, x in enumerate(inputs) if hasattr(x, '_data') and x._requires_grad]
    for i in wrt:
        if inputs[i]._data.dtype != np.float64:
            warnings.warn(f'Input #{i} requires gradient and is not a double precision floating '
                          'point. This check will likely fail if all the inputs are not of '
                          'double precision floating point. ')
    if not wrt:
        raise ValueError('gradcheck expects at least one input tensor to require gradient, '
                         'but none of the them have requires_grad=True.')

    outputs = _differentiable_outputs(_tensors(func(*inputs)))
    analytical = _analytical_jacobians(outputs, inputs, wrt)
    numerical = _numerical_jacobians(func, inputs, wrt, outputs, eps)
    checked = [('Jacobian', analytical)]
    if check_forward_ad:
        checked.append(('Jacobian computed with forward mode',
                        _forward_jacobians(func, inputs, wrt, outputs)))
    for what, jacobians in checked:
        for j in range(len(outputs)):
            for col, i in enumerate(wrt):
                a, n = jacobians[j][col], numerical[j][col]
                if not xp.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(raise_exception,
                                 f'{what} mismatch for output {j} with respect to input {i},\n'
                                 f'numerical:{n}\nanalytical:{a}\n')
    again = _analytical_jacobians(outputs, inputs, wrt)
    for j in range(len(outputs)):
        for col in range(len(wrt)):
            if not xp.allclose(again[j][col], analytical[j][col], rtol=0, atol=nondet_tol):
                return _fail(raise_exception,
                             'Backward is not reentrant, i.e., running backward with same input '
                             'and grad_output multiple times gives different values, although '
                             'analytical gradient matches numerical gradient.')
    return True


def _fail(raise_exception, msg):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function ``(inputs, grad_outputs) -> vector-Jacobian product``."""
    from . import grad
    inputs = _tensors(inputs)
    n = len(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(_tensors(func(*inputs)))
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            Tensor._make(rng.standard_normal(o._data.shape).astype(o._data.dtype), True, None,
                         0, None, Tensor) for o in outputs)
    else:
        grad_outputs = _tensors(grad_outputs)

    def vjp(*args):
        ins, gos = args[:n], args[n:]
        outs = _differentiable_outputs(_tensors(func(*ins)))
        diff_ins = [x for x in ins if hasattr(x, '_data') and x._requires_grad]
        grads = grad(outs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)
