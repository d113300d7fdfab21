"""Rows for dynagrad.nn.functional: activations, softmax family, normalization, embeddings.

In-place forms (``inplace=True``, ``elu_``) are rows of their own whose ``fn`` clones the
input first, so the write happens on a non-leaf and its gradient reaches the leaf.
"""
import numpy as np

from ._core import *  # noqa: F403


def F(lib):
    return lib.nn.functional


def _between(low, high, dtype=np.float32):
    def make(rng, *shape):
        return np.asarray(rng.uniform(low, high, shape), dtype=dtype)
    return make


def _away(points, make=R, gap=0.05):
    """``make``'s values moved off the kinks at ``points`` (finite differences need it)."""
    def mk(rng, *shape):
        v = make(rng, *shape)
        for p in points:
            near = np.abs(v - p) < gap
            v = np.where(near, v + 2 * gap, v).astype(v.dtype)
        return v
    return mk


WIDE = _between(-4.5, 4.5)       # reaches the kinks at +-3 of hardsigmoid, hardswish


def act_samples(make=NZ, kwargs=(), f64=True):
    """Shapes, 0-dim, empty, non-contiguous and float64 for a unary activation; ``kwargs``:
    extra (desc, kwargs) pairs run on a 2-D input."""
    def gen(rng):
        s = [
            Sample((make(rng, 3, 4),), desc='2d'),
            Sample((make(rng),), desc='0dim'),
            Sample((make(rng, 0),), desc='empty'),
            Sample((make(rng, 2, 3, 2),), desc='3d'),
            Sample((nc(make(rng, 4, 3), TR),), desc='noncontig_T'),
            Sample((nc(make(rng, 3, 4), STEP),), desc='noncontig_step'),
        ]
        if f64:
            s.append(Sample((make(rng, 2, 3).astype(np.float64),), desc='f64'))
        for desc, kw in kwargs:
            s.append(Sample((make(rng, 2, 3),), dict(kw), desc=desc))
            s.append(Sample((make(rng, 2, 2).astype(np.float64),), dict(kw), desc=desc + '_f64'))
        return s
    return gen


def int_errors(*extra):
    def gen(rng):
        return [ErrorSample((I64(rng, 3),), exc=NotImplementedError, desc='int64'),
                *[e for f in extra for e in f(rng)]]
    return gen


def fn(name, **fixed):
    return lambda lib, *a, **k: getattr(F(lib), name)(*a, **fixed, **k)


def inplace_fn(name, **fixed):
    """``F.<name>(x.clone(), inplace=True)``, or ``F.<name>_`` when ``name`` ends in ``_``."""
    if name.endswith('_'):
        return lambda lib, x, *a, **k: getattr(F(lib), name)(x.clone(), *a, **fixed, **k)
    return lambda lib, x, *a, **k: getattr(F(lib), name)(x.clone(), *a, inplace=True,
                                                         **fixed, **k)


# -- activations -----------------------------------------------------------------------

HT = _away((-1.0, 1.0))                     # hardtanh's kinks
HT6 = _away((0.0, 6.0), _between(-2, 8))    # relu6's
W3 = _away((-3.0, 3.0), WIDE)               # hardsigmoid's, hardswish's
SHRINK = _away((-0.5, 0.5, -1.0, 1.0))      # hard/softshrink's (lambd 0.5 and 1)


def hardtanh_errors(rng):
    return [ErrorSample((R(rng, 3),), dict(min_val=1.0, max_val=-1.0), exc=ValueError,
                        desc='min_gt_max')]


def gelu_errors(rng):
    return [ErrorSample((R(rng, 3),), dict(approximate='erf'), desc='bad_approximate')]


def softshrink_errors(rng):
    return [ErrorSample((R(rng, 3),), dict(lambd=-1.0), desc='negative_lambd')]


def threshold_samples(rng):
    return [Sample((_away((0.1,))(rng, 3, 4), 0.1, 2.0), desc='2d'),
            Sample((_away((0.0,))(rng), 0.0, -1.0), desc='0dim'),
            Sample((R(rng, 0, 2), 0.0, 1.0), desc='empty'),
            Sample((nc(_away((0.5,))(rng, 4, 3), TR), 0.5, 0.0), desc='noncontig'),
            Sample((_away((0.3,))(rng, 2, 3).astype(np.float64), 0.3, -5.0), desc='f64'),
            Sample((I64(rng, 2, 3), 1, 7), desc='int64'),
            Sample((_away((-0.5,))(rng, 2, 3),), dict(threshold=-0.5, value=0.5),
                   desc='kwargs')]


def threshold_inplace_samples(rng):
    return [s for s in threshold_samples(rng) if s.desc in ('2d', 'noncontig', 'f64')] + [
        Sample((_away((0.1,))(rng, 3, 4), 0.1, -2.0), desc='value_below'),
        Sample((_away((0.3,))(rng, 2, 3).astype(np.float64), 0.3, -5.0), desc='f64_below')]


def prelu_samples(rng):
    return [Sample((NZ(rng, 2, 3, 4), R(rng, 3)), desc='channels'),
            Sample((NZ(rng, 2, 3), R(rng, 1)), desc='single_weight'),
            Sample((NZ(rng, 2, 3, 2, 2), R(rng, 3)), desc='4d'),
            Sample((NZ(rng, 4), R(rng, 1)), desc='1d'),
            Sample((NZ(rng), R(rng, 1)), desc='0dim'),
            Sample((NZ(rng, 2, 3), R(rng)), desc='0dim_weight'),
            Sample((NZ(rng, 0, 3), R(rng, 3)), desc='empty'),
            Sample((nc(NZ(rng, 3, 2), TR), R(rng, 3)), desc='noncontig'),
            Sample((F64NZ(rng, 2, 3), F64(rng, 3)), desc='f64'),
            Sample((F64NZ(rng, 2, 2), F64(rng, 2)), desc='small_f64')]


def prelu_errors(rng):
    return [ErrorSample((R(rng, 2, 3), R(rng, 2)), desc='channel_mismatch'),
            ErrorSample((R(rng, 4), R(rng, 4)), desc='1d_channels'),
            ErrorSample((R(rng, 2, 3), R(rng, 3, 1)), desc='weight_2d'),
            ErrorSample((I64(rng, 2, 3), R(rng, 3)), desc='int64_float_weight'),
            ErrorSample((I64(rng, 2, 3), I64(rng, 3)), exc=NotImplementedError, desc='int64')]


def glu_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='default_dim'),
            Sample((R(rng, 4, 3), 0), desc='dim0'),
            Sample((R(rng, 2, 4, 3), -2), desc='neg_dim'),
            Sample((R(rng, 2),), desc='1d'),
            Sample((R(rng, 0, 4),), desc='empty'),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((F64(rng, 2, 2),), desc='f64'),
            Sample((F64(rng, 4),), dict(dim=0), desc='f64_kw')]


def glu_errors(rng):
    return [ErrorSample((R(rng, 3, 3),), desc='odd'),
            ErrorSample((R(rng),), desc='0dim'),
            ErrorSample((R(rng, 2, 4), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((I64(rng, 2, 4),), exc=NotImplementedError, desc='int64')]


def softmax_samples(rng):
    neg_inf = R(rng, 2, 3)
    neg_inf[0, 1] = -np.inf
    return [Sample((R(rng, 3, 4), 1), desc='dim1'),
            Sample((R(rng, 3, 4), 0), desc='dim0'),
            Sample((R(rng, 2, 3, 2), -1), desc='neg_dim'),
            Sample((R(rng), 0), desc='0dim'),
            Sample((R(rng, 0, 3), 1), desc='empty'),
            Sample((R(rng, 3, 0), 1), desc='empty_dim'),
            Sample((nc(R(rng, 4, 3), TR), 1), desc='noncontig'),
            Sample((nc(R(rng, 3, 4), STEP), 0), desc='noncontig_step'),
            Sample((F64(rng, 2, 3), 1), desc='f64'),
            Sample((F64(rng, 2, 2), 0), desc='small_f64'),
            Sample((R(rng, 2, 3),), dict(dim=1, dtype=DT('float64')), desc='dtype'),
            Sample((I64(rng, 2, 3),), dict(dim=1, dtype=DT('float32')), desc='int_dtype'),
            Sample((neg_inf, 1), desc='neg_inf', gradcheck=False),
            Sample((R(rng, 3, 4) * 30, 1), desc='large')]


def softmax_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=IndexError, desc='dim_out_of_range'),
            ErrorSample((I64(rng, 2, 3), 1), exc=NotImplementedError, desc='int64'),
            ErrorSample((R(rng, 2, 3), (0,)), exc=TypeError, desc='tuple_dim')]


def implicit_dim_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='2d'), Sample((R(rng, 2, 3, 2),), desc='3d'),
            Sample((R(rng, 4),), desc='1d'), Sample((R(rng, 2, 2, 2, 2),), desc='4d')]


_implicit = 'ignore:Implicit dimension choice'


def _quiet(name):
    import warnings

    def call(lib, *a, **k):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            return getattr(F(lib), name)(*a, **k)
    return call


ACTIVATION_OPS = [
    OpInfo('nn.functional.relu', fn('relu'), act_samples(NZ), errors=lambda rng: []),
    OpInfo('nn.functional.relu_inplace', inplace_fn('relu'), act_samples(NZ)),
    OpInfo('nn.functional.relu_', inplace_fn('relu_'), act_samples(NZ)),
    OpInfo('nn.functional.relu6', fn('relu6'), act_samples(HT6)),
    OpInfo('nn.functional.relu6_inplace', inplace_fn('relu6'), act_samples(HT6)),
    OpInfo('nn.functional.hardtanh', fn('hardtanh'), act_samples(HT, kwargs=(
        ('bounds', dict(min_val=-0.5, max_val=1.5)),)), errors=hardtanh_errors),
    OpInfo('nn.functional.hardtanh_', inplace_fn('hardtanh_'), act_samples(HT)),
    OpInfo('nn.functional.leaky_relu', fn('leaky_relu'), act_samples(NZ, kwargs=(
        ('slope', dict(negative_slope=0.2)), ('neg_slope', dict(negative_slope=-0.5)))),
        errors=int_errors()),
    OpInfo('nn.functional.leaky_relu_inplace', inplace_fn('leaky_relu'), act_samples(
        NZ, kwargs=(('slope', dict(negative_slope=0.3)),))),
    OpInfo('nn.functional.leaky_relu_', inplace_fn('leaky_relu_'), act_samples(NZ)),
    OpInfo('nn.functional.elu', fn('elu'), act_samples(NZ, kwargs=(
        ('alpha', dict(alpha=0.5)), ('neg_alpha', dict(alpha=-0.7)))), errors=int_errors()),
    OpInfo('nn.functional.elu_inplace', inplace_fn('elu'), act_samples(
        NZ, kwargs=(('alpha', dict(alpha=2.0)),))),
    OpInfo('nn.functional.elu_', inplace_fn('elu_'), act_samples(NZ)),
    OpInfo('nn.functional.selu', fn('selu'), act_samples(NZ), errors=int_errors()),
    OpInfo('nn.functional.selu_inplace', inplace_fn('selu'), act_samples(NZ)),
    OpInfo('nn.functional.celu', fn('celu'), act_samples(NZ, kwargs=(
        ('alpha', dict(alpha=0.5)),)), errors=int_errors()),
    OpInfo('nn.functional.celu_inplace', inplace_fn('celu'), act_samples(
        NZ, kwargs=(('alpha', dict(alpha=1.5)),))),
    OpInfo('nn.functional.threshold', fn('threshold'), threshold_samples),
    OpInfo('nn.functional.threshold_inplace', inplace_fn('threshold'),
           threshold_inplace_samples),
    OpInfo('nn.functional.threshold_', inplace_fn('threshold_'), threshold_inplace_samples),
    OpInfo('nn.functional.rrelu_eval', fn('rrelu'), act_samples(NZ, kwargs=(
        ('bounds', dict(lower=0.1, upper=0.5)),))),
    OpInfo('nn.functional.prelu', fn('prelu'), prelu_samples, errors=prelu_errors),
    OpInfo('nn.functional.gelu', fn('gelu'), act_samples(R, kwargs=(
        ('tanh', dict(approximate='tanh')), ('none', dict(approximate='none')))),
        errors=int_errors(gelu_errors)),
    OpInfo('nn.functional.gelu_tanh', fn('gelu', approximate='tanh'), act_samples(WIDE)),
    OpInfo('nn.functional.silu', fn('silu'), act_samples(WIDE), errors=int_errors()),
    OpInfo('nn.functional.silu_inplace', inplace_fn('silu'), act_samples(WIDE)),
    OpInfo('nn.functional.mish', fn('mish'), act_samples(WIDE), errors=int_errors()),
    OpInfo('nn.functional.mish_inplace', inplace_fn('mish'), act_samples(WIDE)),
    OpInfo('nn.functional.softplus', fn('softplus'), act_samples(WIDE, kwargs=(
        ('beta', dict(beta=2.0)), ('threshold', dict(beta=1.5, threshold=2.0)),
        ('beta_half', dict(beta=0.5, threshold=1.0)))), errors=int_errors()),
    OpInfo('nn.functional.logsigmoid', fn('logsigmoid'), act_samples(WIDE),
           errors=int_errors()),
    OpInfo('nn.functional.hardsigmoid', fn('hardsigmoid'), act_samples(W3),
           errors=int_errors()),
    OpInfo('nn.functional.hardsigmoid_inplace', inplace_fn('hardsigmoid'), act_samples(W3)),
    OpInfo('nn.functional.hardswish', fn('hardswish'), act_samples(W3), errors=int_errors()),
    OpInfo('nn.functional.hardswish_inplace', inplace_fn('hardswish'), act_samples(W3)),
    OpInfo('nn.functional.hardshrink', fn('hardshrink'), act_samples(SHRINK, kwargs=(
        ('lambd', dict(lambd=1.0)),)), errors=int_errors()),
    OpInfo('nn.functional.softshrink', fn('softshrink'), act_samples(SHRINK, kwargs=(
        ('lambd', dict(lambd=1.0)),)), errors=int_errors(softshrink_errors)),
    OpInfo('nn.functional.softsign', fn('softsign'), act_samples(NZ)),
    OpInfo('nn.functional.tanhshrink', fn('tanhshrink'), act_samples(R)),
    OpInfo('nn.functional.glu', fn('glu'), glu_samples, errors=glu_errors),
    OpInfo('nn.functional.tanh', fn('tanh'), act_samples(R)),
    OpInfo('nn.functional.sigmoid', fn('sigmoid'), act_samples(WIDE)),
    OpInfo('nn.functional.softmax', fn('softmax'), softmax_samples, errors=softmax_errors),
    OpInfo('nn.functional.log_softmax', fn('log_softmax'), softmax_samples,
           errors=softmax_errors),
    OpInfo('nn.functional.softmin', fn('softmin'), softmax_samples, errors=softmax_errors),
    OpInfo('nn.functional.softmax_implicit_dim', _quiet('softmax'), implicit_dim_samples),
    OpInfo('nn.functional.log_softmax_implicit_dim', _quiet('log_softmax'),
           implicit_dim_samples),
]


OPS = ACTIVATION_OPS


# -- normalization -------------------------------------------------------------------------

def _stats_tensor(lib, x, values):
    return lib.tensor(np.asarray(values)).to(x.dtype)


def batch_norm_fn(lib, x, *params, training=True, stats=True, **k):
    """F.batch_norm with fresh running statistics; returns (out, running_mean, running_var)
    so the in-place updates are compared too."""
    c = x.shape[1]
    if not stats:
        return F(lib).batch_norm(x, None, None, *params, training=training, **k)
    rm = _stats_tensor(lib, x, np.linspace(-0.5, 0.5, c))
    rv = _stats_tensor(lib, x, np.linspace(0.5, 1.5, c))
    out = F(lib).batch_norm(x, rm, rv, *params, training=training, **k)
    return out, rm, rv


def batch_norm_samples(rng):
    return [
        Sample((R(rng, 4, 3), R(rng, 3), R(rng, 3)), desc='2d'),
        Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3)), desc='3d'),
        Sample((R(rng, 2, 2, 3, 2), R(rng, 2), R(rng, 2)), desc='4d'),
        Sample((R(rng, 2, 3, 4),), desc='no_affine'),
        Sample((R(rng, 2, 3, 4), R(rng, 3)), desc='weight_only'),
        Sample((R(rng, 2, 3, 4), None, R(rng, 3)), desc='bias_only'),
        Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3)), dict(training=False), desc='eval'),
        Sample((R(rng, 2, 3), R(rng, 3)), dict(training=False), desc='eval_weight'),
        Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3)), dict(momentum=0.3, eps=1e-3),
               desc='momentum_eps'),
        Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3)), dict(stats=False), desc='no_stats'),
        Sample((nc(R(rng, 2, 4, 3), TR), R(rng, 3), R(rng, 3)), desc='noncontig'),
        Sample((F64(rng, 3, 2), F64(rng, 2), F64(rng, 2)), desc='f64_small'),
        Sample((F64(rng, 2, 2, 2),), desc='f64_3d_no_affine'),
        Sample((F64(rng, 2, 2), F64(rng, 2), F64(rng, 2)), desc='f64_affine_gradgrad'),
        Sample((F64(rng, 2, 2, 2), F64(rng, 2), F64(rng, 2)), dict(training=False),
               desc='f64_eval'),
        # torch takes a composite path for empty input (AddBackward0): names not compared
        Sample((R(rng, 0, 3), R(rng, 3), R(rng, 3)), dict(training=False), desc='empty_eval',
               check_grad_fn=False),
    ]


def batch_norm_errors(rng):
    return [
        ErrorSample((R(rng, 1, 3),), desc='one_value_per_channel', exc=ValueError),
        ErrorSample((R(rng, 2, 3), R(rng, 4)), desc='weight_size'),
        ErrorSample((I64(rng, 2, 3),), desc='int64', exc=NotImplementedError),
        ErrorSample((R(rng, 2, 3), R(rng, 3).astype(np.float64)), desc='mixed_dtype'),
        ErrorSample((R(rng, 2, 3),), dict(training=False, stats=False), desc='eval_no_stats'),
    ]


def layer_norm_samples(rng):
    return [
        Sample((R(rng, 2, 3, 4), (4,), R(rng, 4), R(rng, 4)), desc='last_dim'),
        Sample((R(rng, 2, 3, 4), (3, 4), R(rng, 3, 4), R(rng, 3, 4)), desc='two_dims'),
        Sample((R(rng, 3, 4), [4]), desc='list_no_affine'),
        Sample((R(rng, 3, 4), (4,), R(rng, 4)), desc='weight_only'),
        Sample((R(rng, 3, 4), (4,), None, R(rng, 4)), desc='bias_only'),
        Sample((R(rng, 4), (4,), R(rng, 4), R(rng, 4)), desc='1d'),
        Sample((R(rng, 0, 4), (4,), R(rng, 4), R(rng, 4)), desc='empty_batch'),
        Sample((nc(R(rng, 4, 3), TR), (4,), R(rng, 4), R(rng, 4)), desc='noncontig'),
        Sample((R(rng, 3, 4), (4,)), dict(eps=1e-2), desc='eps'),
        Sample((F64(rng, 2, 3), (3,), F64(rng, 3), F64(rng, 3)), desc='f64_small'),
        Sample((F64(rng, 2, 2, 2), (2, 2)), desc='f64_two_dims'),
        Sample((F64(rng, 2, 2), (2,), F64(rng, 2), F64(rng, 2)), desc='f64_affine_gradgrad'),
    ]


def layer_norm_errors(rng):
    return [
        ErrorSample((R(rng, 2, 3), (4,)), desc='shape_mismatch'),
        ErrorSample((R(rng, 2, 3), (3,), R(rng, 4)), desc='weight_shape'),
        ErrorSample((R(rng, 2, 3), ()), desc='empty_shape'),
        ErrorSample((R(rng, 2, 3), 3), exc=TypeError, desc='int_shape'),
        ErrorSample((I64(rng, 2, 3), (3,)), exc=NotImplementedError, desc='int64'),
    ]


def group_norm_samples(rng):
    return [
        Sample((R(rng, 2, 4, 3), 2, R(rng, 4), R(rng, 4)), desc='2_groups'),
        Sample((R(rng, 2, 4, 2, 2), 4, R(rng, 4), R(rng, 4)), desc='4d_4_groups'),
        Sample((R(rng, 2, 6), 2, R(rng, 6), R(rng, 6)), desc='2d'),
        Sample((R(rng, 2, 4, 3), 1), desc='1_group_no_affine'),
        Sample((R(rng, 2, 4, 3), 2, R(rng, 4)), desc='weight_only'),
        # (weight None with a bias: torch's own backward fails, 'tensor does not have a device')
        Sample((R(rng, 2, 4, 3), 2, R(rng, 4), R(rng, 4)), dict(eps=1e-3), desc='eps'),
        Sample((nc(R(rng, 2, 3, 4), TR), 2, R(rng, 4), R(rng, 4)), desc='noncontig'),
        Sample((F64(rng, 1, 4, 2), 2, F64(rng, 4), F64(rng, 4)), desc='f64_small'),
        Sample((F64(rng, 1, 2, 2), 1, F64(rng, 2), F64(rng, 2)), desc='f64_gradgrad'),
    ]


def group_norm_errors(rng):
    return [
        ErrorSample((R(rng, 2, 3, 4), 2), desc='not_divisible'),
        ErrorSample((R(rng, 2, 4, 3), 2, R(rng, 3)), desc='weight_size'),
        ErrorSample((R(rng, 3), 1), desc='1d'),
    ]


def instance_norm_fn(lib, x, *params, stats=False, **k):
    if not stats:
        return F(lib).instance_norm(x, None, None, *params, **k)
    c = x.shape[1]
    rm = _stats_tensor(lib, x, np.linspace(-0.5, 0.5, c))
    rv = _stats_tensor(lib, x, np.linspace(0.5, 1.5, c))
    return F(lib).instance_norm(x, rm, rv, *params, **k), rm, rv


def instance_norm_samples(rng):
    # torch records instance_norm as a view of a batch_norm: node names are not compared
    return [Sample(s.args, s.kwargs, desc=s.desc, check_grad_fn=False) for s in [
        Sample((R(rng, 2, 3, 4),), desc='3d'),
        Sample((R(rng, 2, 2, 2, 3), R(rng, 2), R(rng, 2)), desc='4d_affine'),
        Sample((R(rng, 2, 3, 4), R(rng, 3)), dict(stats=True), desc='running_stats'),
        Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3)),
               dict(stats=True, use_input_stats=False), desc='use_running_stats'),
        Sample((R(rng, 2, 3, 4),), dict(stats=True, momentum=0.5, eps=1e-3), desc='momentum'),
        Sample((nc(R(rng, 2, 4, 3), TR),), desc='noncontig'),
        Sample((F64(rng, 1, 2, 3), F64(rng, 2), F64(rng, 2)), desc='f64_small'),
        Sample((F64(rng, 1, 1, 4), F64(rng, 1), F64(rng, 1)), desc='f64_gradgrad'),
        Sample((F64(rng, 1, 2, 3), F64(rng, 2)), dict(stats=True, use_input_stats=False),
               desc='f64_running_gradgrad'),
    ]]


def instance_norm_errors(rng):
    return [ErrorSample((R(rng, 2, 3),), exc=ValueError, desc='one_spatial'),
            ErrorSample((R(rng, 2, 3, 4),), dict(use_input_stats=False), desc='no_stats')]


def rms_norm_samples(rng):
    # torch records rms_norm as a chain of small ops: node names are not compared
    return [Sample(s.args, s.kwargs, desc=s.desc, check_grad_fn=False) for s in [
        Sample((R(rng, 2, 3, 4), (4,), R(rng, 4)), desc='last_dim'),
        Sample((R(rng, 2, 3, 4), (3, 4), R(rng, 3, 4)), desc='two_dims'),
        Sample((R(rng, 3, 4), [4]), desc='no_weight'),
        Sample((R(rng, 3, 4), (4,)), dict(eps=1e-2), desc='eps'),
        Sample((R(rng, 0, 4), (4,), R(rng, 4)), desc='empty'),
        Sample((nc(R(rng, 4, 3), TR), (4,), R(rng, 4)), desc='noncontig'),
        Sample((F64(rng, 2, 3), (3,), F64(rng, 3)), desc='f64_small'),
        Sample((F64(rng, 2, 2, 2), (2, 2)), desc='f64_no_weight'),
        Sample((F64(rng, 2, 2), (2,), F64(rng, 2)), desc='f64_gradgrad'),
    ]]


def rms_norm_errors(rng):
    return [ErrorSample((R(rng, 2, 3), (4,)), desc='shape_mismatch'),
            ErrorSample((R(rng, 2, 3), (3,), R(rng, 4)), desc='weight_shape')]


def lrn_samples(rng):
    return [Sample((R(rng, 2, 4, 3), 2), desc='3d_size2'),
            Sample((R(rng, 2, 5, 2, 2), 3), dict(alpha=0.1, beta=0.5, k=2.0), desc='4d'),
            Sample((R(rng, 1, 3, 2), 1), desc='size1'),
            Sample((R(rng, 1, 3, 2), 5), dict(alpha=0.5), desc='size_gt_channels'),
            Sample((nc(R(rng, 2, 3, 4), TR), 2), desc='noncontig'),
            Sample((F64(rng, 1, 3, 2), 2), dict(alpha=0.3), desc='f64_small')]


def lrn_errors(rng):
    return [ErrorSample((R(rng, 2, 3), 2), exc=ValueError, desc='2d')]


def normalize_samples(rng):
    return [Sample((R(rng, 3, 4),), desc='default'),
            Sample((R(rng, 3, 4),), dict(dim=0), desc='dim0'),
            Sample((R(rng, 2, 3, 2),), dict(p=1.0, dim=-1), desc='p1'),
            Sample((R(rng, 3, 4),), dict(p=3.0), desc='p3'),
            Sample((R(rng, 4),), dict(dim=0), desc='1d'),
            Sample((np.zeros((2, 3), np.float32),), desc='zeros_eps', gradcheck=False),
            Sample((nc(R(rng, 4, 3), TR),), desc='noncontig'),
            Sample((F64(rng, 2, 3),), desc='f64_small')]


def normalize_errors(rng):
    return [ErrorSample((R(rng, 3),), dict(dim=1), exc=IndexError, desc='dim_out_of_range')]


NORM_OPS = [
    OpInfo('nn.functional.batch_norm', batch_norm_fn, batch_norm_samples,
           errors=batch_norm_errors),
    OpInfo('nn.functional.layer_norm', fn('layer_norm'), layer_norm_samples,
           errors=layer_norm_errors),
    OpInfo('nn.functional.group_norm', fn('group_norm'), group_norm_samples,
           errors=group_norm_errors),
    OpInfo('nn.functional.instance_norm', instance_norm_fn, instance_norm_samples,
           errors=instance_norm_errors),
    OpInfo('nn.functional.rms_norm', fn('rms_norm'), rms_norm_samples, errors=rms_norm_errors),
    OpInfo('nn.functional.local_response_norm', fn('local_response_norm'), lrn_samples,
           errors=lrn_errors),
    OpInfo('nn.functional.normalize', fn('normalize'), normalize_samples,
           errors=normalize_errors),
]

OPS = ACTIVATION_OPS + NORM_OPS


# -- dropout (deterministic cases; random masks: tests/nn/test_functional_activation_norm.py)

def dropout_samples(rng):
    return [Sample((R(rng, 3, 4),), dict(training=False), desc='eval'),
            Sample((R(rng, 3, 4),), dict(p=0.0), desc='p0'),
            Sample((R(rng, 3, 4),), dict(p=1.0), desc='p1'),
            Sample((R(rng, 0, 4),), dict(p=0.5), desc='empty'),
            Sample((F64(rng, 2, 3),), dict(p=1.0), desc='p1_f64')]


def feature_dropout_samples(rng):
    return [Sample((R(rng, 2, 3, 4, 2),), dict(training=False), desc='eval'),
            Sample((R(rng, 2, 3, 4, 2),), dict(p=1.0), desc='p1'),
            Sample((R(rng, 2, 3, 4, 2),), dict(p=0.0), desc='p0'),
            Sample((F64(rng, 1, 2, 2, 1),), dict(p=1.0), desc='p1_f64')]


def dropout_errors(rng):
    return [ErrorSample((R(rng, 3),), dict(p=1.5), exc=ValueError, desc='p_gt_1'),
            ErrorSample((R(rng, 3),), dict(p=-0.1), exc=ValueError, desc='p_negative'),
            ErrorSample((I64(rng, 3),), dict(p=0.5, training=True), desc='int64')]


DROPOUT_OPS = [
    OpInfo('nn.functional.dropout', fn('dropout'), dropout_samples, errors=dropout_errors),
    OpInfo('nn.functional.dropout_inplace', inplace_fn('dropout'),
           lambda rng: [s for s in dropout_samples(rng) if s.desc.startswith('p1')]),
    OpInfo('nn.functional.alpha_dropout', fn('alpha_dropout', training=True),
           lambda rng: dropout_samples(rng)[1:], errors=lambda rng: dropout_errors(rng)[:2]),
    OpInfo('nn.functional.dropout2d', fn('dropout2d'), feature_dropout_samples,
           errors=lambda rng: dropout_errors(rng)[:2]),
    OpInfo('nn.functional.dropout3d', fn('dropout3d'), lambda rng: [
        Sample((R(rng, 2, 2, 2, 2, 2),), dict(p=1.0), desc='p1'),
        Sample((R(rng, 2, 2, 2, 2),), dict(training=False), desc='eval_unbatched')]),
    OpInfo('nn.functional.dropout1d', fn('dropout1d'), lambda rng: [
        Sample((R(rng, 2, 3, 4),), dict(p=1.0), desc='p1'),
        Sample((R(rng, 3, 4),), dict(p=1.0), desc='p1_unbatched')],
        errors=lambda rng: [ErrorSample((R(rng, 3),), desc='1d')]),
    OpInfo('nn.functional.feature_alpha_dropout', fn('feature_alpha_dropout', training=True),
           lambda rng: feature_dropout_samples(rng)[1:]),
]


# -- embeddings --------------------------------------------------------------------------

def _idx(rng, high, *shape, dtype=np.int64):
    return rng.integers(0, high, shape).astype(dtype)


def embedding_samples(rng):
    return [Sample((_idx(rng, 5, 2, 3), R(rng, 5, 3)), desc='2d_indices'),
            Sample((np.array([1, 1, 3, 1]), R(rng, 5, 2)), desc='repeated'),
            Sample((np.array(2), R(rng, 4, 3)), desc='0dim_index'),
            Sample((np.zeros((0, 2), np.int64), R(rng, 4, 3)), desc='empty'),
            Sample((_idx(rng, 5, 4, dtype=np.int32), R(rng, 5, 3)), desc='int32'),
            Sample((np.array([0, 2, 2, 1]), R(rng, 4, 3)), dict(padding_idx=2), desc='padding'),
            Sample((np.array([0, 3, 3, 1]), R(rng, 4, 3)), dict(padding_idx=-1),
                   desc='padding_negative'),
            Sample((np.array([[0, 2], [2, 2]]), R(rng, 4, 3)), dict(scale_grad_by_freq=True),
                   desc='scale_grad_by_freq'),
            # padding rows get no gradient by definition (not the derivative): no gradcheck
            Sample((np.array([0, 2, 2, 1]), R(rng, 4, 2)),
                   dict(scale_grad_by_freq=True, padding_idx=1), desc='freq_padding',
                   gradcheck=False),
            Sample((np.array([0, 1, 1]), nc(R(rng, 3, 3), TR)), desc='noncontig_weight'),
            Sample((np.array([[0, 2], [1, 0]]), F64(rng, 3, 2)), desc='f64_small'),
            Sample((np.array([1, 0, 1]), F64(rng, 2, 2)), dict(padding_idx=0),
                   desc='f64_padding', gradcheck=False)]


def embedding_errors(rng):
    return [ErrorSample((R(rng, 2), R(rng, 4, 3)), desc='float_indices'),
            ErrorSample((np.array([1, 4]), R(rng, 4, 3)), exc=IndexError, desc='out_of_range'),
            ErrorSample((np.array([1, -1]), R(rng, 4, 3)), exc=IndexError, desc='negative'),
            ErrorSample((np.array([1, 2]), R(rng, 4, 3)), dict(padding_idx=4),
                        exc=AssertionError, desc='padding_out_of_range'),
            ErrorSample((np.array([1, 2]), R(rng, 4)), desc='weight_1d')]


def embedding_max_norm_fn(lib, idx, w, **k):
    """max_norm renormalises the weight rows read, in place: compare the weight too."""
    w = w.detach().clone()
    return F(lib).embedding(idx, w, **k), w


def embedding_max_norm_samples(rng):
    return [Sample((np.array([[0, 2], [2, 3]]), R(rng, 5, 3)), dict(max_norm=1.0),
                   desc='max_norm', requires_grad=False),
            Sample((np.array([0, 1, 4]), R(rng, 5, 3)), dict(max_norm=0.5, norm_type=1.0),
                   desc='norm_type_1', requires_grad=False)]


def _offsets(*v):
    return np.array(v, np.int64)


def embedding_bag_samples(rng):
    return [
        Sample((_idx(rng, 5, 3, 2), R(rng, 5, 3)), desc='2d_mean'),
        Sample((_idx(rng, 5, 3, 2), R(rng, 5, 3)), dict(mode='sum'), desc='2d_sum'),
        Sample((_idx(rng, 5, 3, 2), R(rng, 5, 3)), dict(mode='max'), desc='2d_max'),
        Sample((np.array([0, 2, 1, 4, 4, 3]), R(rng, 5, 3), _offsets(0, 2, 2, 5)),
               desc='offsets_empty_bag'),
        Sample((np.array([0, 2, 1, 4, 4, 3]), R(rng, 5, 3), _offsets(0, 2, 2, 5)),
               dict(mode='sum'), desc='offsets_sum'),
        Sample((np.array([0, 2, 1, 4, 4, 3]), R(rng, 5, 3), _offsets(0, 2, 2, 5)),
               dict(mode='max'), desc='offsets_max'),
        # (the last offset is the input's length, as it is meant to be: with a shorter one
        # torch's CPU kernel sums up to it but divides the mean by the count to the end)
        Sample((np.array([0, 2, 1, 4, 3]), R(rng, 5, 3), _offsets(0, 1, 5)),
               dict(include_last_offset=True), desc='include_last_offset'),
        Sample((np.array([0, 2, 1, 4, 3]), R(rng, 5, 3), _offsets(0, 1, 5)),
               dict(include_last_offset=True, mode='max'), desc='include_last_offset_max'),
        Sample((np.array([1, 2, 1, 0]), R(rng, 3, 2), _offsets(0, 2)),
               dict(mode='sum', per_sample_weights=R(rng, 4)), desc='per_sample_weights'),
        Sample((np.array([[1, 2], [0, 0]]), R(rng, 3, 2)),
               dict(mode='sum', per_sample_weights=R(rng, 2, 2)), desc='2d_per_sample_weights'),
        Sample((np.array([1, 2, 1, 0, 2]), R(rng, 3, 2), _offsets(0, 3)),
               dict(padding_idx=1), desc='padding_mean'),
        Sample((np.array([1, 2, 1, 0, 2]), R(rng, 3, 2), _offsets(0, 3)),
               dict(padding_idx=1, mode='sum'), desc='padding_sum'),
        Sample((np.array([1, 2, 1, 0, 2]), R(rng, 3, 2), _offsets(0, 3)),
               dict(padding_idx=1, mode='max'), desc='padding_max'),
        Sample((np.array([1, 1, 0]), R(rng, 3, 2), _offsets(0, 2)),
               dict(padding_idx=1, mode='mean'), desc='all_padding_bag'),
        Sample((np.array([[0, 1], [1, 1]]), F64(rng, 2, 2)), dict(mode='sum'), desc='f64_sum'),
        Sample((np.array([[0, 1], [1, 0]]), F64(rng, 2, 2)), desc='f64_mean'),
        Sample((np.array([[0, 1], [1, 0]]), F64(rng, 2, 2)), dict(mode='max'),
               desc='f64_max'),
        Sample((np.array([1, 0, 1]), F64(rng, 2, 2), _offsets(0, 1)),
               dict(mode='sum', per_sample_weights=F64(rng, 3)), desc='f64_psw'),
    ]


def embedding_bag_errors(rng):
    w = R(rng, 5, 3)
    return [
        ErrorSample((np.array([[1, 2]]), w, _offsets(0)), exc=ValueError, desc='2d_offsets'),
        ErrorSample((np.array([1, 2]), w), exc=ValueError, desc='1d_no_offsets'),
        ErrorSample((np.array([1, 2]), w, _offsets(0)),
                    dict(mode='mean', per_sample_weights=R(rng, 2)), exc=NotImplementedError,
                    desc='psw_mean'),
        ErrorSample((np.array([1, 2]), w, _offsets(0)), dict(mode='prod'), exc=ValueError,
                    desc='bad_mode'),
        ErrorSample((np.array([1, 2]), w, _offsets(1)), desc='first_offset'),
        ErrorSample((np.array([1, 2]), w, _offsets(0, 3)), desc='last_offset'),
        ErrorSample((np.array([1, 7]), w, _offsets(0)), desc='index_out_of_range'),
        ErrorSample((np.array([1, 2]), w, _offsets(0, 1)),
                    dict(mode='sum', per_sample_weights=R(rng, 3)), exc=ValueError,
                    desc='psw_shape'),
        ErrorSample((R(rng, 2), w, _offsets(0)), desc='float_indices'),
    ]


def one_hot_samples(rng):
    return [Sample((np.array([0, 2, 1]),), desc='infer'),
            Sample((np.array([[0, 2], [1, 1]]), 4), desc='2d_num_classes'),
            Sample((np.array(2), 3), desc='0dim'),
            Sample((np.zeros((0,), np.int64), 3), desc='empty'),
            Sample((np.array([1, 0]),), dict(num_classes=-1), desc='kw_infer')]


def one_hot_errors(rng):
    return [ErrorSample((np.array([1, 3]), 3), desc='too_large'),
            ErrorSample((np.array([1, -1]), 3), desc='negative'),
            ErrorSample((R(rng, 2),), desc='float'),
            ErrorSample((np.array([1, 2], np.int32), 3), desc='int32'),
            ErrorSample((np.zeros((0,), np.int64),), desc='empty_infer')]


EMBEDDING_OPS = [
    OpInfo('nn.functional.embedding', fn('embedding'), embedding_samples,
           errors=embedding_errors),
    OpInfo('nn.functional.embedding_max_norm', embedding_max_norm_fn,
           embedding_max_norm_samples),
    OpInfo('nn.functional.embedding_bag', fn('embedding_bag'), embedding_bag_samples,
           errors=embedding_bag_errors),
    OpInfo('nn.functional.one_hot', fn('one_hot'), one_hot_samples, errors=one_hot_errors,
           differentiable=False),
]

OPS = ACTIVATION_OPS + NORM_OPS + DROPOUT_OPS + EMBEDDING_OPS


# -- top-level forms (torch.softmax, torch.layer_norm, ...): PyTorch's top-level signatures

def top(name, clone=False):
    """``lib.<name>(*args)`` (on a clone of the first argument for in-place forms)."""
    if clone:
        return lambda lib, x, *a, **k: getattr(lib, name)(x.clone(), *a, **k)
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def top_softmax_samples(rng):
    return [Sample((R(rng, 3, 4), 1), desc='dim1'),
            Sample((F64(rng, 2, 3), 0), desc='f64_dim0'),
            Sample((R(rng, 2, 3), 1, DT('float64')), desc='positional_dtype'),
            Sample((R(rng, 2, 3),), dict(dim=-1, dtype=DT('float64')), desc='kw')]


def top_softmax_errors(rng):
    return [ErrorSample((R(rng, 2, 3),), exc=TypeError, desc='dim_required')]


def top_unary(make, *extra):
    def gen(rng):
        return [Sample((make(rng, 3, 4),) + extra, desc='2d'),
                Sample((make(rng, 2, 3).astype(np.float64),) + extra, desc='f64')]
    return gen


def top_dropout_samples(rng):
    return [Sample((R(rng, 3, 4), 0.5, False), desc='eval'),
            Sample((R(rng, 3, 4), 0.0, True), desc='p0'),
            Sample((R(rng, 2, 3), 0.3), dict(train=False), desc='kw_train')]


def top_dropout_errors(rng):
    return [ErrorSample((R(rng, 3), 0.5), exc=TypeError, desc='train_required'),
            ErrorSample((R(rng, 3), 0.5), dict(training=False), exc=TypeError,
                        desc='nn_functional_keyword')]


def top_batch_norm_fn(lib, x, w, b, training, momentum, eps, cudnn):
    """torch.batch_norm: affine parameters before the running statistics."""
    c = x.shape[1]
    rm = _stats_tensor(lib, x, np.linspace(-0.5, 0.5, c))
    rv = _stats_tensor(lib, x, np.linspace(0.5, 1.5, c))
    return lib.batch_norm(x, w, b, rm, rv, training, momentum, eps, cudnn), rm, rv


def top_batch_norm_samples(rng):
    return [Sample((R(rng, 4, 3, 2), R(rng, 3), R(rng, 3), True, 0.1, 1e-5, False),
                   desc='train'),
            Sample((R(rng, 4, 3), R(rng, 3), None, False, 0.1, 1e-5, True), desc='eval'),
            Sample((F64(rng, 3, 2, 2), F64(rng, 2), F64(rng, 2), True, 0.3, 1e-3, False),
                   desc='f64')]


def top_instance_norm_fn(lib, x, w, b, use_input_stats, momentum, eps, cudnn):
    return lib.instance_norm(x, w, b, None, None, use_input_stats, momentum, eps, cudnn)


def top_instance_norm_samples(rng):
    # torch records its instance norm as a batch norm seen through a view (ViewBackward0)
    return [Sample((R(rng, 2, 3, 4), R(rng, 3), R(rng, 3), True, 0.1, 1e-5, False),
                   desc='affine', check_grad_fn=False),
            Sample((F64(rng, 2, 2, 3), None, None, True, 0.1, 1e-5, False), desc='f64',
                   check_grad_fn=False)]


def top_layer_norm_samples(rng):
    return [Sample((R(rng, 2, 3, 4), [4], R(rng, 4), R(rng, 4), 1e-5, True), desc='affine'),
            Sample((R(rng, 2, 3, 4), (3, 4)), desc='defaults'),
            Sample((F64(rng, 2, 3), [3], F64(rng, 3)), dict(eps=1e-3, cudnn_enable=False),
                   desc='f64_kw')]


def top_group_norm_samples(rng):
    return [Sample((R(rng, 2, 4, 3), 2, R(rng, 4), R(rng, 4), 1e-5, True), desc='affine'),
            Sample((F64(rng, 2, 6), 3), dict(eps=1e-3, cudnn_enabled=False), desc='f64')]


def top_rms_norm_samples(rng):
    # torch.rms_norm is composite (MulBackward0), nn.functional's fused: a detail
    return [Sample((R(rng, 2, 3, 4), [4], R(rng, 4), 1e-6), desc='weight', check_grad_fn=False),
            Sample((F64(rng, 2, 3), [3]), desc='f64', check_grad_fn=False)]


def _detached(outs, keep=1):
    """The first ``keep`` outputs as they are, the statistics after them detached."""
    return tuple(o if i < keep else o.detach() for i, o in enumerate(outs))


def native_layer_norm_fn(lib, *a):
    return lib.native_layer_norm(*a)


def native_group_norm_fn(lib, *a):
    return _detached(lib.native_group_norm(*a))


def native_batch_norm_fn(lib, x, w, b, training, momentum, eps, stats=True):
    c = x.shape[1]
    rm = _stats_tensor(lib, x, np.linspace(-0.5, 0.5, c)) if stats else None
    rv = _stats_tensor(lib, x, np.linspace(0.5, 1.5, c)) if stats else None
    outs = lib.native_batch_norm(x, w, b, rm, rv, training, momentum, eps)
    return outs + (rm, rv) if stats else outs


def native_layer_norm_samples(rng):
    return [Sample((R(rng, 2, 3, 4), [4], R(rng, 4), R(rng, 4), 1e-5), desc='affine',
                   check_grad_fn=False),
            Sample((F64(rng, 2, 3, 2), [3, 2], None, None, 1e-3), desc='f64_2dims',
                   check_grad_fn=False)]


def native_group_norm_samples(rng):
    return [Sample((R(rng, 2, 4, 3), R(rng, 4), R(rng, 4), 2, 4, 3, 2, 1e-5), desc='affine',
                   check_grad_fn=False),
            Sample((F64(rng, 2, 6), None, None, 2, 6, 1, 3, 1e-3), desc='f64_2d',
                   check_grad_fn=False)]


def native_batch_norm_samples(rng):
    return [Sample((R(rng, 4, 3, 2), R(rng, 3), R(rng, 3), True, 0.1, 1e-5), desc='train',
                   check_grad_fn=False),
            Sample((R(rng, 4, 3), R(rng, 3), R(rng, 3), False, 0.1, 1e-5), desc='eval',
                   check_grad_fn=False),
            Sample((F64(rng, 3, 2, 2), None, None, True, 0.1, 1e-3), dict(stats=False),
                   desc='f64_no_stats', check_grad_fn=False)]


def norm_except_dim_samples(rng):
    return [Sample((NZ(rng, 3, 4, 2), 2, 0), desc='dim0'),
            Sample((NZ(rng, 3, 4, 2), 2, 1), desc='middle_dim'),
            Sample((NZ(rng, 3, 4, 2), 3, 2), desc='last_dim_p3'),
            Sample((F64NZ(rng, 3, 4), 2, -1), desc='whole', check_grad_fn=False),
            Sample((F64NZ(rng, 3, 2),), desc='defaults')]


def top_embedding_samples(rng):
    idx = np.array([[0, 2], [3, 2]])
    return [Sample((R(rng, 5, 3), idx), desc='2d_indices'),
            Sample((R(rng, 5, 3), np.array([1, 4, 1]), 1), desc='padding_idx_positional'),
            # the gradient is scaled on purpose: finite differences do not apply
            Sample((F64(rng, 4, 2), np.array([3, 3, 0]), -1, True), desc='scale_grad_by_freq',
                   gradcheck=False)]


def top_embedding_bag_samples(rng):
    idx, off = np.array([1, 2, 3, 4, 5]), np.array([0, 2, 2])
    return [Sample((R(rng, 6, 3), idx, off), desc='sum'),
            Sample((R(rng, 6, 3), idx, off, False, 1), desc='mean'),
            Sample((R(rng, 6, 3), idx, off, False, 2), desc='max', check_grad_fn=False),
            Sample((R(rng, 6, 3), idx, off, False, 1, False, None, False, 2),
                   desc='mean_padding_idx'),
            Sample((F64(rng, 6, 2), idx, off, False, 0), desc='f64_sum')]


def top_grid_sampler_3d_samples(rng):
    """(input, grid, interpolation_mode 0 bilinear / 1 nearest, padding_mode 0 zeros /
    1 border / 2 reflection, align_corners), volumetric."""
    def grid(*shape):
        return np.asarray(rng.uniform(-1.3, 1.3, shape), dtype=np.float32)
    return [Sample((R(rng, 1, 2, 3, 4, 3), grid(1, 2, 2, 3, 3), 0, 0, False), desc='bilinear'),
            Sample((R(rng, 2, 1, 2, 3, 4), grid(2, 1, 2, 2, 3), 1, 1, True), desc='nearest'),
            Sample((R(rng, 1, 1, 3, 3, 2), grid(1, 2, 1, 3, 3) * 2, 0, 2, True),
                   desc='reflection')]


TOPLEVEL_OPS = [
    OpInfo('toplevel.grid_sampler_3d', top('grid_sampler_3d'), top_grid_sampler_3d_samples),
    OpInfo('toplevel.grid_sampler_volumetric', top('grid_sampler'),
           top_grid_sampler_3d_samples),
    OpInfo('toplevel.softmax', top('softmax'), top_softmax_samples,
           errors=top_softmax_errors),
    OpInfo('toplevel.log_softmax', top('log_softmax'), top_softmax_samples,
           errors=top_softmax_errors),
    OpInfo('toplevel.hardshrink', top('hardshrink'), top_unary(SHRINK, 1.0),
           method='hardshrink'),
    OpInfo('toplevel.hardshrink_default', top('hardshrink'), top_unary(SHRINK),
           method='hardshrink'),
    OpInfo('toplevel.prelu', top('prelu'), prelu_samples, method='prelu',
           errors=prelu_errors),
    OpInfo('toplevel.celu', top('celu'), top_unary(NZ, 0.5)),
    OpInfo('toplevel.celu_', top('celu_', clone=True), top_unary(NZ, 1.5)),
    OpInfo('toplevel.selu', top('selu'), top_unary(NZ)),
    OpInfo('toplevel.selu_', top('selu_', clone=True), top_unary(NZ)),
    OpInfo('toplevel.relu_', top('relu_', clone=True), top_unary(NZ)),
    OpInfo('toplevel.rrelu_eval', top('rrelu'), top_unary(NZ, 0.1, 0.4)),
    OpInfo('toplevel.rrelu_eval_', top('rrelu_', clone=True), top_unary(NZ, 0.1, 0.4)),
    OpInfo('toplevel.threshold', top('threshold'), top_unary(_away((0.1,)), 0.1, 2.0)),
    OpInfo('toplevel.threshold_', top('threshold_', clone=True),
           top_unary(_away((0.1,)), 0.1, -2.0)),
    OpInfo('toplevel.dropout', top('dropout'), top_dropout_samples,
           errors=top_dropout_errors),
    OpInfo('toplevel.alpha_dropout', top('alpha_dropout'), top_dropout_samples),
    OpInfo('toplevel.feature_dropout', top('feature_dropout'), top_dropout_samples),
    OpInfo('toplevel.feature_alpha_dropout', top('feature_alpha_dropout'),
           top_dropout_samples),
    OpInfo('toplevel.batch_norm', top_batch_norm_fn, top_batch_norm_samples),
    OpInfo('toplevel.instance_norm', top_instance_norm_fn, top_instance_norm_samples),
    OpInfo('toplevel.layer_norm', top('layer_norm'), top_layer_norm_samples),
    OpInfo('toplevel.group_norm', top('group_norm'), top_group_norm_samples),
    OpInfo('toplevel.rms_norm', top('rms_norm'), top_rms_norm_samples),
    OpInfo('toplevel.native_layer_norm', native_layer_norm_fn, native_layer_norm_samples),
    OpInfo('toplevel.native_group_norm', native_group_norm_fn, native_group_norm_samples),
    OpInfo('toplevel.native_batch_norm', native_batch_norm_fn, native_batch_norm_samples),
    OpInfo('toplevel.norm_except_dim', top('norm_except_dim'), norm_except_dim_samples),
    OpInfo('toplevel.embedding', top('embedding'), top_embedding_samples),
    OpInfo('toplevel.embedding_bag', top('embedding_bag'), top_embedding_bag_samples),
]

OPS = OPS + TOPLEVEL_OPS
