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
    return [o for o in outputs if hasattr(o, '_data') and o._data.dtype.kind in 'fc'
            and (o._requires_grad or not need_grad)]


# Complex numbers are checked as PyTorch checks them: as pairs of reals. A complex input
# contributes two columns (its real and its imaginary part moved), a complex output two rows
# (its real and imaginary parts), and a gradient z's pair (dL/dx, dL/dy) is its real and
# imaginary part (PyTorch's convention), reached by seeding an output with 1 and with 1j.

def _real_vector(array):
    """An array as float64 numbers, a complex one as (real, imag) pairs."""
    if array.dtype.kind == 'c':
        return xp.stack((array.real, array.imag), -1).astype(np.float64).ravel()
    return array.astype(np.float64).ravel()


def _units(array):
    """The directions one element of ``array`` moves in: 1, and 1j for complex arrays."""
    return (1, 1j) if array.dtype.kind == 'c' else (1,)


def _width(array):
    return array.size * len(_units(array))


def _numerical_jacobians(func, inputs, wrt, outputs, eps):
    """J[o][i] has shape (output reals, input reals), by central differences."""
    # Inputs are perturbed through their arrays (no version bump), and func runs with grad
    # mode as the caller has it, because gradgradcheck's func itself calls autograd.grad.
    n_outputs = len(outputs)
    jac = [[None] * len(wrt) for _ in range(n_outputs)]
    for col, i in enumerate(wrt):
        data = inputs[i]._data
        columns = [[] for _ in range(n_outputs)]
        for k in range(data.size):
            idx = xp.unravel_index(k, data.shape)
            orig = data[idx].item()
            for unit in _units(data):
                data[idx] = orig + eps * unit
                plus = [_real_vector(o._data) for o in
                        _differentiable_outputs(_tensors(func(*inputs)))]
                data[idx] = orig - eps * unit
                minus = [_real_vector(o._data) for o in
                         _differentiable_outputs(_tensors(func(*inputs)))]
                data[idx] = orig
                for j in range(n_outputs):
                    columns[j].append((plus[j] - minus[j]) / (2 * eps))
        for j in range(n_outputs):
            jac[j][col] = (xp.stack(columns[j], axis=1) if columns[j]
                           else xp.zeros((_width(outputs[j]._data), 0)))
    return jac


def _forward_jacobians(func, inputs, wrt, outputs):
    """J[o][i] by forward mode: one dual pass per input direction, a unit tangent each."""
    from . import forward_ad as fw
    jac = [[xp.zeros((_width(o._data), _width(inputs[i]._data))) for i in wrt]
           for o in outputs]
    for col, i in enumerate(wrt):
        data = inputs[i]._data
        units = _units(data)
        for k in range(data.size):
            for u, unit_value in enumerate(units):
                unit = xp.zeros(data.shape, data.dtype)
                unit.reshape(-1)[k] = unit_value
                with fw.dual_level():
                    args = list(inputs)
                    args[i] = fw.make_dual(inputs[i].detach(), wrap(unit))
                    outs = _differentiable_outputs(_tensors(func(*args)), need_grad=False)
                    for j, o in enumerate(outs):
                        t = fw.unpack_dual(o).tangent
                        if t is not None:
                            jac[j][col][:, k * len(units) + u] = _real_vector(t._data)
    return jac


def _analytical_jacobians(outputs, inputs, wrt):
    from . import grad
    jac = []
    for o in outputs:
        data = o._data
        units = _units(data)
        rows = [xp.zeros((_width(data), _width(inputs[i]._data))) for i in wrt]
        for m in range(data.size):
            for u, unit in enumerate(units):
                seed = xp.zeros(data.shape, data.dtype)
                seed.flat[m] = unit
                grads = grad((o,), [inputs[i] for i in wrt], (wrap(seed),), retain_graph=True,
                             allow_unused=True)
                for col, gi in enumerate(grads):
                    if gi is not None:
                        rows[col][m * len(units) + u] = _real_vector(gi._data)
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
        if inputs[i]._data.dtype not in (np.float64, np.complex128):
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


def _random_like(rng, array):
    values = rng.standard_normal(array.shape)
    if array.dtype.kind == 'c':
        values = values + 1j * rng.standard_normal(array.shape)
    return xp.asarray(values, dtype=array.dtype)    # an array even for a 0-d output


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
            Tensor._make(_random_like(rng, o._data), True, None, 0, None, Tensor)
            for o in outputs)
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
