"""Activation modules: each holds its arguments and calls its nn.functional form."""
from ..module import Module
from ...tensor import check_device
from ..parameter import Parameter
from .. import functional as F


def _activation(name, fn_name, params=(), repr_fmt=None, inplace=False, doc=None):
    """A Module class whose constructor takes ``params`` (name, default) and whose forward
    is ``F.<fn_name>(input, *those values)``; ``repr_fmt`` formats ``extra_repr``."""
    names = [p for p, _ in params] + (['inplace'] if inplace else [])
    defaults = dict(params, **({'inplace': False} if inplace else {}))

    def __init__(self, *args, **kwargs):
        # cooperative, as PyTorch's classes are: a class mixed in after this one in a
        # subclass's bases (pyro's PyroModule[nn.Sigmoid]) runs its own __init__ too
        super(made, self).__init__()
        if len(args) > len(names):
            raise TypeError(f'{name}() takes at most {len(names)} arguments ({len(args)} given)')
        values = dict(defaults)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in defaults:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input):
        fn = getattr(F, fn_name)
        return fn(input, *(getattr(self, k) for k in names))

    def extra_repr(self):
        if repr_fmt is None:
            text = ''
        else:
            text = repr_fmt.format(**{k: getattr(self, k) for k in names})
        if inplace and self.inplace:
            text = (text + ', ' if text else '') + 'inplace=True'
        return text

    made = type(name, (Module,), {'__init__': __init__, 'forward': forward,
                                  'extra_repr': extra_repr, '__doc__': doc or
                                  f'Applies ``nn.functional.{fn_name}`` element-wise.'})
    return made


ReLU = _activation('ReLU', 'relu', inplace=True)
ReLU6 = _activation('ReLU6', 'relu6', inplace=True)
LeakyReLU = _activation('LeakyReLU', 'leaky_relu', [('negative_slope', 0.01)],
                        'negative_slope={negative_slope}', inplace=True)
ELU = _activation('ELU', 'elu', [('alpha', 1.0)], 'alpha={alpha}', inplace=True)
CELU = _activation('CELU', 'celu', [('alpha', 1.0)], 'alpha={alpha}', inplace=True)
SELU = _activation('SELU', 'selu', inplace=True)
GELU = _activation('GELU', 'gelu', [('approximate', 'none')], 'approximate={approximate!r}')
SiLU = _activation('SiLU', 'silu', inplace=True)
Mish = _activation('Mish', 'mish', inplace=True)
Softplus = _activation('Softplus', 'softplus', [('beta', 1.0), ('threshold', 20.0)],
                       'beta={beta}, threshold={threshold}')
Softsign = _activation('Softsign', 'softsign')
Hardtanh = _activation('Hardtanh', 'hardtanh', [('min_val', -1.0), ('max_val', 1.0)],
                       'min_val={min_val}, max_val={max_val}', inplace=True)
Hardsigmoid = _activation('Hardsigmoid', 'hardsigmoid', inplace=True)
Hardswish = _activation('Hardswish', 'hardswish', inplace=True)
Tanhshrink = _activation('Tanhshrink', 'tanhshrink')
Threshold = _activation('Threshold', 'threshold', [('threshold', None), ('value', None)],
                        'threshold={threshold}, value={value}', inplace=True)
GLU = _activation('GLU', 'glu', [('dim', -1)], 'dim={dim}')
LogSigmoid = _activation('LogSigmoid', 'logsigmoid')
Tanh = _activation('Tanh', 'tanh')
Sigmoid = _activation('Sigmoid', 'sigmoid')
Softmax = _activation('Softmax', 'softmax', [('dim', None)], 'dim={dim}')
LogSoftmax = _activation('LogSoftmax', 'log_softmax', [('dim', None)], 'dim={dim}')
Softmin = _activation('Softmin', 'softmin', [('dim', None)], 'dim={dim}')
Hardshrink = _activation('Hardshrink', 'hardshrink', [('lambd', 0.5)], '{lambd}')
Softshrink = _activation('Softshrink', 'softshrink', [('lambd', 0.5)], '{lambd}')


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn in [lower, upper] in training, their mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f'lower={self.lower}, upper={self.upper}' + (', inplace=True' if self.inplace
                                                            else '')


class Softmax2d(Module):
    """Softmax over the channel dimension of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f'Softmax2d: expected input to be 3D or 4D, got {input.dim()}D '
                             'instead')
        return F.softmax(input, -3)


class PReLU(Module):
    """``max(0, x) + weight * min(0, x)`` with a learned slope (one, or one per channel)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        check_device(device)   # an unavailable device raises here
        super().__init__()
        from ... import ops
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ops.full((num_parameters,), init, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f'num_parameters={self.num_parameters}'


# PyTorch defines MultiheadAttention in its activation module; programs import it from there.
from .attention import MultiheadAttention  # noqa: E402,F401

__all__ = ['ReLU', 'ReLU6', 'LeakyReLU', 'ELU', 'CELU', 'SELU', 'GELU', 'SiLU', 'Mish',
           'Softplus', 'Softsign', 'Hardtanh', 'Hardsigmoid', 'Hardswish', 'Tanhshrink',
           'Threshold', 'GLU', 'LogSigmoid', 'Tanh', 'Sigmoid', 'Softmax', 'LogSoftmax',
           'Softmin', 'Hardshrink', 'Softshrink', 'RReLU', 'Softmax2d', 'PReLU']
