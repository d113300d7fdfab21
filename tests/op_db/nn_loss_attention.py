"""Rows for dynagrad.nn.functional: losses, attention and distances.

Arguments torch refuses to differentiate (``weight``/``pos_weight`` of the BCE losses,
``soft_margin_loss``'s target) go in as keyword tensors, which the harness never marks as
requiring grad.
"""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403

REDUCTIONS = ('mean', 'sum', 'none')


def F(name):
    def fn(lib, *args, **kwargs):
        return getattr(lib.nn.functional, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


def PROB(rng, *shape, dtype=np.float32):
    return np.asarray(rng.uniform(0.05, 0.95, shape), dtype=dtype)


def SIGN(rng, *shape, dtype=np.float32):
    return np.asarray(rng.choice([-1.0, 1.0], shape), dtype=dtype)


def CLS(rng, n_classes, *shape):
    return np.asarray(rng.integers(0, n_classes, shape), dtype=np.int64)


def _f64(a):
    return a.astype(np.float64)


# -- regression losses -------------------------------------------------------------------------

def regression_samples(extra=None, target=R):
    extra = extra or {}

    def gen(rng):
        s = [Sample((R(rng, 3, 4), target(rng, 3, 4)), dict(reduction=r, **extra),
                    desc=f'{r}') for r in REDUCTIONS]
        s += [Sample((R(rng, 2, 3), target(rng, 2, 3)), dict(extra), desc='small'),
              Sample((R(rng, 2, 2), target(rng, 2, 2)), dict(reduction='none', **extra),
                     desc='small_none'),
              Sample((R(rng), target(rng)), dict(extra), desc='0dim'),
              Sample((R(rng, 0, 3), target(rng, 0, 3)), dict(reduction='sum', **extra),
                     desc='empty_sum'),
              Sample((R(rng, 0, 3), target(rng, 0, 3)), dict(extra), desc='empty_mean'),
              Sample((nc(R(rng, 4, 3), TR), target(rng, 3, 4)), dict(extra),
                     desc='noncontig'),
              Sample((_f64(R(rng, 2, 3)), _f64(target(rng, 2, 3))), dict(reduction='sum',
                                                                         **extra), desc='f64'),
              Sample((R(rng, 2, 3), target(rng, 3)), dict(reduction='none', **extra),
                     desc='broadcast_target')]
        return s
    return gen


def legacy_samples(rng):
    return [Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(size_average=False), desc='legacy_sum'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(reduce=False), desc='legacy_none'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(size_average=True, reduce=True),
                   desc='legacy_mean'),
            Sample((R(rng, 2, 3), I64(rng, 2, 3)), desc='int_target')]


def with_legacy(gen):
    return lambda rng: gen(rng) + legacy_samples(rng)


def regression_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 5)), desc='shape_mismatch'),
            ErrorSample((R(rng, 3, 4), R(rng, 3, 4)), dict(reduction='avg'), exc=ValueError,
                        desc='bad_reduction')]


def smooth_l1_samples(rng):
    s = regression_samples(dict(beta=0.5))(rng)
    s += [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='default_beta'),
          Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(beta=0.0), desc='beta0'),
          Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(beta=3.0, reduction='sum'),
                 desc='beta_large')]
    return s


def smooth_l1_errors(rng):
    return regression_errors(rng) + [
        ErrorSample((R(rng, 3, 4), R(rng, 3, 4)), dict(beta=-1.0), desc='negative_beta')]


def huber_samples(rng):
    s = regression_samples(dict(delta=0.7))(rng)
    s += [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='default_delta'),
          Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(delta=3.0, reduction='sum'),
                 desc='delta_large')]
    return s


def huber_errors(rng):
    return regression_errors(rng) + [
        ErrorSample((R(rng, 3, 4), R(rng, 3, 4)), dict(delta=0.0), desc='zero_delta')]


# -- binary classification -------------------------------------------------------------------

def bce_samples(rng):
    s = [Sample((PROB(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((PROB(rng, 2, 3), PROB(rng, 2, 3)), desc='small'),
          Sample((PROB(rng, 2, 2), PROB(rng, 2, 2)), dict(reduction='sum'), desc='small_sum'),
          Sample((PROB(rng, 3, 4), PROB(rng, 3, 4)), dict(weight=PROB(rng, 4)),
                 desc='weight'),
          Sample((PROB(rng, 3, 4), PROB(rng, 3, 4)), dict(weight=PROB(rng, 3, 1),
                                                          reduction='none'),
                 desc='weight_bcast_none'),
          Sample((PROB(rng), PROB(rng)), desc='0dim'),
          Sample((PROB(rng, 0, 2), PROB(rng, 0, 2)), dict(reduction='sum'), desc='empty'),
          Sample((nc(PROB(rng, 4, 3), TR), PROB(rng, 3, 4)), desc='noncontig'),
          Sample((PROB(rng, 2, 3, dtype=np.float64), PROB(rng, 2, 3, dtype=np.float64)),
                 desc='f64'),
          Sample((np.array([0.0, 1.0, 0.5, 1e-30], np.float32),
                  np.array([1.0, 0.0, 0.5, 1.0], np.float32)), dict(reduction='none'),
                 gradcheck=False, desc='log_clamp_at_-100')]
    return s


def bce_errors(rng):
    return [ErrorSample((R(rng, 3, 4) + 3, PROB(rng, 3, 4)), desc='input_out_of_range'),
            ErrorSample((PROB(rng, 3, 4), PROB(rng, 4)), exc=ValueError, desc='size_mismatch'),
            ErrorSample((PROB(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction='x'),
                        exc=ValueError, desc='bad_reduction')]


def bce_logits_samples(rng):
    s = [Sample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), PROB(rng, 2, 3)), desc='small'),
          Sample((R(rng, 2, 2), PROB(rng, 2, 2)), dict(pos_weight=POS(rng, 2)),
                 desc='small_pos_weight'),
          Sample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(weight=PROB(rng, 4),
                                                       pos_weight=POS(rng, 4),
                                                       reduction='none'),
                 desc='weight_pos_weight'),
          Sample((R(rng, 3, 4) * 30, PROB(rng, 3, 4)), dict(reduction='sum'),
                 desc='large_logits'),
          Sample((R(rng), PROB(rng)), desc='0dim'),
          Sample((R(rng, 0, 2), PROB(rng, 0, 2)), dict(reduction='sum'), desc='empty'),
          Sample((nc(R(rng, 4, 3), TR), PROB(rng, 3, 4)), desc='noncontig'),
          Sample((_f64(R(rng, 2, 3)), PROB(rng, 2, 3, dtype=np.float64)),
                 dict(pos_weight=POS(rng, 3).astype(np.float64)), desc='f64')]
    return s


def bce_logits_errors(rng):
    return [ErrorSample((R(rng, 3, 4), PROB(rng, 4)), exc=ValueError, desc='size_mismatch')]


def soft_margin_samples(rng):
    s = [Sample((R(rng, 3, 4),), dict(target=SIGN(rng, 3, 4), reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3),), dict(target=SIGN(rng, 2, 3)), desc='small'),
          Sample((R(rng, 3, 4) * 40,), dict(target=SIGN(rng, 3, 4)), desc='large'),
          Sample((R(rng),), dict(target=SIGN(rng)), desc='0dim'),
          Sample((nc(R(rng, 4, 3), TR),), dict(target=SIGN(rng, 3, 4)), desc='noncontig'),
          Sample((_f64(R(rng, 2, 3)),), dict(target=SIGN(rng, 2, 3, dtype=np.float64)),
                 desc='f64')]
    return s


def multilabel_soft_margin_samples(rng):
    t = lambda *s: (rng.random(s) > 0.5).astype(np.float32)  # noqa: E731
    s = [Sample((R(rng, 3, 4), t(3, 4)), dict(reduction=r), desc=r) for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), t(2, 3)), desc='small'),
          Sample((R(rng, 3, 4), t(3, 4)), dict(weight=PROB(rng, 4)), desc='weight'),
          Sample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction='sum'), desc='soft_target'),
          Sample((_f64(R(rng, 2, 3)), _f64(t(2, 3))), desc='f64')]
    return s


# -- classification over classes ----------------------------------------------------------------

def nll_samples(rng):
    s = [Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    t = CLS(rng, 3, 5)
    t[1] = -100
    s += [Sample((R(rng, 2, 3), CLS(rng, 3, 2)), desc='small'),
          Sample((R(rng, 5, 3), t), desc='ignore_default'),
          Sample((R(rng, 5, 3), CLS(rng, 3, 5)), dict(ignore_index=1, reduction='sum'),
                 desc='ignore_index'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(weight=POS(rng, 3)), desc='weight'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(weight=POS(rng, 3), reduction='none',
                                                      ignore_index=0), desc='weight_none'),
          Sample((R(rng, 3), CLS(rng, 3)), desc='unbatched'),
          Sample((R(rng, 2, 3, 4), CLS(rng, 3, 2, 4)), desc='kdim1'),
          Sample((R(rng, 2, 3, 2, 2), CLS(rng, 3, 2, 2, 2)), dict(reduction='none'),
                 desc='kdim2_none'),
          Sample((R(rng, 2, 3, 2, 2), CLS(rng, 3, 2, 2, 2)), dict(weight=POS(rng, 3)),
                 desc='kdim2_weight'),
          Sample((R(rng, 2, 3, 2, 2, 1), CLS(rng, 3, 2, 2, 2, 1)), desc='kdim3'),
          Sample((R(rng, 0, 3), CLS(rng, 3, 0)), dict(reduction='sum'), desc='empty'),
          Sample((nc(R(rng, 3, 4), TR), CLS(rng, 3, 4)), desc='noncontig'),
          Sample((_f64(R(rng, 4, 3)), CLS(rng, 3, 4)), desc='f64'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(size_average=False), desc='legacy')]
    return s


def nll_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3)), desc='float_target'),
            ErrorSample((R(rng, 3, 4), CLS(rng, 4, 3).astype(np.int32)), desc='int32_target'),
            ErrorSample((R(rng, 3, 4), CLS(rng, 4, 2)), exc=ValueError, desc='batch_mismatch'),
            ErrorSample((R(rng, 3, 4), np.array([0, 1, 7])), exc=IndexError,
                        desc='target_out_of_range'),
            ErrorSample((R(rng), np.array(0)), exc=ValueError, desc='0dim_input'),
            ErrorSample((R(rng, 3, 4), CLS(rng, 4, 3)), dict(weight=POS(rng, 3)),
                        desc='weight_size')]


def ce_samples(rng):
    s = nll_samples(rng)
    s += [Sample((R(rng, 4, 3), PROB(rng, 4, 3)), dict(reduction=r), desc=f'probs_{r}')
          for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), PROB(rng, 2, 3)), dict(weight=POS(rng, 3)),
                 desc='probs_weight'),
          Sample((R(rng, 2, 3, 2), PROB(rng, 2, 3, 2)), dict(label_smoothing=0.2),
                 desc='probs_kdim_smooth'),
          Sample((R(rng, 3), PROB(rng, 3)), desc='probs_unbatched'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(label_smoothing=0.1), desc='smooth'),
          Sample((R(rng, 5, 3), CLS(rng, 3, 5)), dict(label_smoothing=0.3, ignore_index=2,
                                                      weight=POS(rng, 3)),
                 desc='smooth_weight_ignore'),
          Sample((R(rng, 5, 3), CLS(rng, 3, 5)), dict(label_smoothing=0.3, ignore_index=2,
                                                      reduction='sum'),
                 desc='smooth_ignore_sum'),
          Sample((R(rng, 2, 3, 2), CLS(rng, 3, 2, 2)), dict(label_smoothing=0.2,
                                                            reduction='none',
                                                            weight=POS(rng, 3)),
                 desc='smooth_kdim_none'),
          Sample((R(rng, 3), np.array(1)), dict(label_smoothing=0.2), desc='smooth_unbatched')]
    return s


def ce_errors(rng):
    return nll_errors(rng)[:4] + [
        ErrorSample((R(rng, 3, 4), PROB(rng, 3, 5)), desc='probs_shape'),
        ErrorSample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(ignore_index=1),
                    desc='probs_ignore_index'),
        ErrorSample((R(rng, 3, 4), CLS(rng, 4, 3)), dict(label_smoothing=1.5),
                    desc='label_smoothing_range')]


def multi_margin_samples(rng):
    s = [Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), CLS(rng, 3, 2)), desc='small'),
          Sample((R(rng, 2, 3), CLS(rng, 3, 2)), dict(p=2), desc='p2_small'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(p=2, margin=0.5, reduction='none'),
                 desc='p2_margin'),
          Sample((R(rng, 4, 3), CLS(rng, 3, 4)), dict(weight=POS(rng, 3)), desc='weight'),
          Sample((R(rng, 3), np.array(1)), desc='unbatched'),
          Sample((_f64(R(rng, 4, 3)), CLS(rng, 3, 4)), dict(p=2, reduction='sum'),
                 desc='f64')]
    return s


def multi_margin_errors(rng):
    return [ErrorSample((R(rng, 3, 4), CLS(rng, 4, 3)), dict(p=3), exc=ValueError,
                        desc='bad_p'),
            ErrorSample((R(rng, 3, 4), np.array([0, 1, 5])), desc='target_out_of_range'),
            ErrorSample((R(rng, 3, 4), CLS(rng, 4, 2)), desc='target_size')]


def multilabel_margin_samples(rng):
    t = np.array([[0, 2, -1, 1], [3, -1, 0, 0], [1, 2, 3, 0]], np.int64)
    s = [Sample((R(rng, 3, 4), t), dict(reduction=r), desc=r) for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), np.array([[2, -1, 0], [0, 0, 1]])), desc='small_dup'),
          Sample((R(rng, 4), np.array([3, 0, -1, 1])), desc='unbatched'),
          Sample((_f64(R(rng, 3, 4)), t), dict(reduction='sum'), desc='f64')]
    return s


def multilabel_margin_errors(rng):
    return [ErrorSample((R(rng, 3, 4), CLS(rng, 4, 3)), desc='target_shape')]


# -- divergences and likelihoods ----------------------------------------------------------------

def kl_samples(rng):
    s = [Sample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS + ('batchmean',)]
    t = PROB(rng, 2, 3)
    t[0, 1] = 0.0
    s += [Sample((R(rng, 2, 3), t), dict(reduction='sum'), gradcheck=False,
                 desc='zero_target'),   # xlogy(0, 0): d/dt is infinite at t = 0
          Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(log_target=True), desc='log_target'),
          Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(log_target=True, reduction='batchmean'),
                 desc='log_target_batchmean'),
          Sample((R(rng, 2, 3), PROB(rng, 3)), dict(reduction='none'), desc='broadcast'),
          Sample((_f64(R(rng, 2, 3)), PROB(rng, 2, 3, dtype=np.float64)), desc='f64')]
    return s


def kl_errors(rng):
    return [ErrorSample((R(rng, 3, 4), PROB(rng, 3, 5)), desc='shape_mismatch'),
            ErrorSample((R(rng, 3, 4), PROB(rng, 3, 4)), dict(reduction='avg'),
                        exc=ValueError, desc='bad_reduction')]


def poisson_samples(rng):
    counts = lambda *s: np.asarray(rng.integers(0, 5, s), np.float32)  # noqa: E731
    # full=True: Stirling's term jumps at target 1 and its gradient is nan at 0 (as torch's)
    big = lambda *s: np.asarray(rng.integers(2, 6, s), np.float32)  # noqa: E731
    s = [Sample((R(rng, 3, 4), counts(3, 4)), dict(reduction=r), desc=r) for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), counts(2, 3)), desc='small'),
          Sample((POS(rng, 3, 4), counts(3, 4)), dict(log_input=False), desc='not_log'),
          Sample((POS(rng, 2, 3), big(2, 3)), dict(log_input=False, full=True,
                                                      reduction='none'),
                 desc='not_log_full'),
          Sample((R(rng, 3, 4), counts(3, 4)), dict(full=True, eps=1e-4), desc='full'),
          Sample((_f64(R(rng, 2, 3)), _f64(big(2, 3))), dict(full=True), desc='f64')]
    return s


def gaussian_samples(rng):
    s = [Sample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 2), R(rng, 2, 2), POS(rng, 2, 2)), desc='small'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3)), desc='var_one_dim_fewer'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3, 1)), dict(reduction='none'),
                 desc='var_last_dim_1'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3, 4) * 1e-8), dict(eps=1e-3),
                 desc='var_clamped'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3, 4)), dict(full=True, reduction='sum'),
                 desc='full'),
          Sample((_f64(R(rng, 2, 2)), _f64(R(rng, 2, 2)), _f64(POS(rng, 2, 2))), desc='f64')]
    return s


def gaussian_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 4), POS(rng, 3, 3)), exc=ValueError,
                        desc='var_size'),
            ErrorSample((R(rng, 3, 4), R(rng, 3, 4), -POS(rng, 3, 4)), exc=ValueError,
                        desc='var_negative')]


# -- embedding and ranking losses ---------------------------------------------------------------

def hinge_samples(rng):
    s = [Sample((R(rng, 3, 4), SIGN(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 3), SIGN(rng, 2, 3)), dict(margin=0.5), desc='small_margin'),
          Sample((_f64(R(rng, 2, 3)), SIGN(rng, 2, 3, dtype=np.float64)), desc='f64')]
    return s


def ranking_samples(rng):
    s = [Sample((R(rng, 4), R(rng, 4), SIGN(rng, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 3), R(rng, 3), SIGN(rng, 3)), dict(margin=0.3), desc='margin'),
          Sample((R(rng, 2, 3), R(rng, 2, 3), SIGN(rng, 2, 3)), dict(reduction='none'),
                 desc='2d'),
          Sample((_f64(R(rng, 4)), _f64(R(rng, 4)), SIGN(rng, 4, dtype=np.float64)),
                 desc='f64')]
    return s


def ranking_errors(rng):
    return [ErrorSample((R(rng, 4), R(rng, 4), SIGN(rng, 5)), desc='size_mismatch')]


def cosine_embedding_samples(rng):
    s = [Sample((R(rng, 3, 4), R(rng, 3, 4), SIGN(rng, 3)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 2), R(rng, 2, 2), SIGN(rng, 2)), dict(margin=-0.5),
                 desc='small_margin'),
          Sample((R(rng, 4), R(rng, 4), SIGN(rng)), desc='1d'),
          Sample((_f64(R(rng, 3, 4)), _f64(R(rng, 3, 4)), SIGN(rng, 3, dtype=np.float64)),
                 desc='f64')]
    return s


def cosine_embedding_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 4), SIGN(rng, 4)), desc='target_size')]


def triplet_samples(rng):
    s = [Sample((R(rng, 3, 4), R(rng, 3, 4), R(rng, 3, 4)), dict(reduction=r), desc=r)
         for r in REDUCTIONS]
    s += [Sample((R(rng, 2, 2), R(rng, 2, 2), R(rng, 2, 2)), dict(margin=3.0),
                 desc='small'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), R(rng, 3, 4)), dict(p=1, margin=2.0),
                 desc='p1'),
          Sample((R(rng, 3, 4), R(rng, 3, 4), R(rng, 3, 4)), dict(swap=True, margin=2.0),
                 desc='swap'),
          Sample((R(rng, 4), R(rng, 4), R(rng, 4)), dict(margin=3.0), desc='1d'),
          Sample((_f64(R(rng, 3, 4)), _f64(R(rng, 3, 4)), _f64(R(rng, 3, 4))),
                 dict(margin=2.0, eps=1e-3), desc='f64')]
    return s


def triplet_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 4), R(rng, 3, 5)), desc='size_mismatch')]


# -- distances ----------------------------------------------------------------------------------

def cosine_similarity_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='default_dim1'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), dict(dim=0), desc='dim0'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(dim=-1), desc='small_neg_dim'),
            Sample((R(rng, 2, 3, 2), R(rng, 3, 1)), desc='broadcast'),
            Sample((R(rng, 3, 4), np.zeros((3, 4), np.float32)), dict(eps=1e-3),
                   desc='zero_vector_eps'),
            Sample((R(rng, 4), R(rng, 4)), dict(dim=0), desc='1d'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 3, 4)), desc='noncontig'),
            Sample((_f64(R(rng, 3, 4)), _f64(R(rng, 3, 4))), desc='f64')]


def cosine_similarity_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 5)), desc='shape_mismatch'),
            ErrorSample((R(rng, 3, 4), R(rng, 3, 4)), dict(dim=2), exc=IndexError,
                        desc='dim_out_of_range')]


def pairwise_samples(rng):
    return [Sample((R(rng, 3, 4), R(rng, 3, 4)), desc='p2'),
            Sample((R(rng, 2, 3), R(rng, 2, 3)), dict(p=1.0), desc='small_p1'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), dict(p=3.0, keepdim=True), desc='p3_keepdim'),
            Sample((R(rng, 3, 4), R(rng, 3, 4)), dict(p=float('inf')), desc='pinf'),
            Sample((R(rng, 3, 4), R(rng, 4)), dict(eps=1e-3), desc='broadcast'),
            Sample((R(rng, 4), R(rng, 4)), desc='1d'),
            Sample((_f64(R(rng, 3, 4)), _f64(R(rng, 3, 4))), desc='f64')]


def pairwise_errors(rng):
    return [ErrorSample((R(rng, 3, 4), R(rng, 3, 5)), desc='shape_mismatch')]


def pdist_samples(rng):
    x = R(rng, 4, 3)
    x[2] = x[0]
    return [Sample((R(rng, 4, 3),), desc='p2'),
            Sample((R(rng, 3, 2),), desc='small'),
            Sample((R(rng, 3, 2), 1.0), desc='small_p1'),
            Sample((R(rng, 4, 3), 3.0), desc='p3'),
            Sample((R(rng, 3, 2), 1.5), desc='p1.5'),
            Sample((R(rng, 4, 3), float('inf')), desc='pinf'),
            Sample((R(rng, 4, 3), 0.0), desc='p0'),
            Sample((x,), gradcheck=False, desc='zero_distance'),   # |v| has a kink at v = 0
            Sample((R(rng, 1, 3),), desc='one_row'),
            Sample((nc(R(rng, 3, 4), TR),), desc='noncontig'),
            Sample((_f64(R(rng, 4, 3)),), desc='f64')]


def pdist_errors(rng):
    return [ErrorSample((R(rng, 2, 3, 4),), desc='3d'),
            ErrorSample((R(rng, 3, 4), -1.0), desc='negative_p')]


def cdist_samples(rng):
    x1 = R(rng, 3, 2)
    x2 = R(rng, 2, 2)
    x2[1] = x1[0]
    return [Sample((R(rng, 3, 4), R(rng, 2, 4)), desc='p2'),
            Sample((R(rng, 2, 2), R(rng, 2, 2)), desc='small'),
            Sample((R(rng, 2, 2), R(rng, 2, 2), 1.0), desc='small_p1'),
            Sample((R(rng, 2, 3, 4), R(rng, 2, 2, 4), 3.0), desc='batched_p3'),
            Sample((R(rng, 2, 3, 4), R(rng, 2, 4), float('inf')), desc='broadcast_pinf'),
            Sample((R(rng, 3, 4), R(rng, 2, 4), 0.0), desc='p0'),
            Sample((R(rng, 3, 2), R(rng, 2, 2), 1.5), desc='p1.5'),
            Sample((x1, x2), gradcheck=False, desc='zero_distance'),   # kink at 0
            Sample((R(rng, 30, 3), R(rng, 4, 3)), desc='mm_path'),
            Sample((R(rng, 2, 26, 3), R(rng, 3, 3)), desc='mm_path_batched'),
            Sample((R(rng, 3, 4), R(rng, 2, 4)), dict(compute_mode='use_mm_for_euclid_dist'),
                   desc='mm_forced'),
            Sample((R(rng, 30, 3), R(rng, 4, 3)),
                   dict(compute_mode='donot_use_mm_for_euclid_dist'), desc='mm_off'),
            Sample((nc(R(rng, 4, 3), TR), R(rng, 2, 4)), desc='noncontig'),
            Sample((_f64(R(rng, 3, 4)), _f64(R(rng, 2, 4))), desc='f64')]


def cdist_errors(rng):
    return [ErrorSample((R(rng, 4), R(rng, 2, 4)), desc='1d'),
            ErrorSample((R(rng, 3, 4), R(rng, 2, 5)), desc='columns'),
            ErrorSample((R(rng, 3, 4), R(rng, 2, 4), -1.0), desc='negative_p')]


def cdist(lib, *args, **kwargs):
    fn = getattr(lib, 'cdist', None) or lib.nn.functional.cdist
    return fn(*args, **kwargs)


# -- attention ----------------------------------------------------------------------------------

def sdpa_samples(rng):
    bool_mask = rng.random((3, 5)) > 0.3
    bool_mask[:, 0] = True
    hidden_row = np.ones((3, 5), bool)
    hidden_row[1] = False
    return [
        Sample((R(rng, 2, 3, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 6)), desc='3d'),
        Sample((R(rng, 2, 2, 3, 4), R(rng, 2, 2, 5, 4), R(rng, 2, 2, 5, 4)), desc='4d'),
        Sample((R(rng, 2, 2, 3, 4), R(rng, 2, 2, 5, 4), R(rng, 2, 2, 5, 4)),
               dict(is_causal=True), desc='4d_causal'),
        Sample((R(rng, 1, 2, 2), R(rng, 1, 2, 2), R(rng, 1, 2, 2)), desc='small'),
        Sample((R(rng, 2, 2), R(rng, 2, 2), R(rng, 2, 2)), dict(scale=0.7), desc='2d_scale'),
        Sample((R(rng, 2, 3, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 4)), dict(is_causal=True),
               desc='causal'),
        Sample((R(rng, 2, 3, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 4), R(rng, 3, 5)),
               desc='float_mask'),
        Sample((R(rng, 1, 2, 2), R(rng, 1, 2, 2), R(rng, 1, 2, 2), R(rng, 2, 2)),
               desc='float_mask_small'),
        Sample((R(rng, 2, 3, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 4)),
               dict(attn_mask=bool_mask), desc='bool_mask'),
        Sample((R(rng, 2, 3, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 4)),
               dict(attn_mask=hidden_row), desc='bool_mask_hidden_row'),
        Sample((R(rng, 2, 2, 3, 4), R(rng, 2, 2, 5, 4), R(rng, 2, 2, 5, 4)),
               dict(attn_mask=R(rng, 2, 1, 3, 5)), desc='4d_const_float_mask'),
        Sample((R(rng, 2, 3, 4), R(rng, 1, 5, 4), R(rng, 2, 5, 4)), desc='broadcast_batch'),
        Sample((R(rng, 1, 4, 3, 4), R(rng, 1, 2, 5, 4), R(rng, 1, 2, 5, 4)),
               dict(enable_gqa=True), desc='gqa'),
        Sample((nc(R(rng, 2, 4, 3), TR), R(rng, 2, 5, 4), R(rng, 2, 5, 4)),
               desc='noncontig'),
        Sample((R(rng, 2, 2, 3, 4), nc(R(rng, 2, 2, 4, 5), TR), R(rng, 2, 2, 5, 4)),
               desc='4d_noncontig'),
        Sample((_f64(R(rng, 2, 3, 4)), _f64(R(rng, 2, 5, 4)), _f64(R(rng, 2, 5, 4))),
               dict(scale=0.25), desc='f64'),
        # torch short-cuts an empty query (its node is then an AddBackward0)
        Sample((R(rng, 2, 0, 4), R(rng, 2, 5, 4), R(rng, 2, 5, 4)), check_grad_fn=False,
               desc='empty_query'),
    ]


def sdpa_errors(rng):
    q = R(rng, 2, 3, 4)
    return [ErrorSample((q, q, q), dict(attn_mask=R(rng, 3, 3), is_causal=True),
                        desc='mask_and_causal'),
            ErrorSample((q, q, _f64(q)), desc='dtype_mismatch'),
            ErrorSample((q, q, q), dict(attn_mask=_f64(R(rng, 3, 3))), desc='mask_dtype'),
            ErrorSample((q, q, q), dict(dropout_p=1.5), desc='dropout_range'),
            ErrorSample((R(rng, 4), R(rng, 5, 4), R(rng, 5, 4)), desc='1d_query'),
            ErrorSample((q, R(rng, 2, 3, 5), q), desc='embed_mismatch')]


# -- CTC ----------------------------------------------------------------------------------------

def ctc(lib, logits, targets, input_lengths, target_lengths, **kwargs):
    """ctc_loss of log_softmax(logits): torch's CTC gradient assumes normalised log_probs, so
    the gradient w.r.t. the logits is the true one (gradcheck holds)."""
    F_ = lib.nn.functional
    return F_.ctc_loss(F_.log_softmax(logits, -1), targets, input_lengths, target_lengths,
                       **kwargs)


def ctc_samples(rng):
    padded = np.array([[1, 2, 2], [1, 1, 0], [3, 0, 0]])
    return [
        Sample((R(rng, 6, 3, 5), padded, [6, 5, 4], [3, 2, 0]), dict(reduction=r), desc=r)
        for r in REDUCTIONS] + [
        Sample((R(rng, 3, 1, 4), np.array([[1, 2]]), [3], [2]), desc='small'),
        Sample((R(rng, 6, 3, 5), np.array([1, 2, 2, 1, 1, 3]), np.array([6, 6, 3]),
                np.array([3, 2, 1])), dict(reduction='none'), desc='concatenated'),
        Sample((R(rng, 6, 3, 5), np.array([[1, 1, 1], [2, 2, 2], [1, 2, 1]]), [2, 6, 6],
                [3, 3, 3]), dict(reduction='none', zero_infinity=True),
               desc='zero_infinity'),
        Sample((R(rng, 5, 2, 4), np.array([[0, 2], [0, 0]]), [5, 4], [2, 1]),
               dict(blank=3, reduction='sum'), desc='blank3'),
        Sample((R(rng, 5, 4), np.array([1, 3]), np.array(5), np.array(2)), desc='unbatched'),
        Sample((_f64(R(rng, 5, 2, 4)), np.array([[1, 2], [3, 3]]), [5, 5], [2, 2]),
               desc='f64'),
    ]


def ctc_errors(rng):
    t = np.array([[1, 2], [1, 1]])
    return [ErrorSample((R(rng, 5, 2, 4), t, [6, 5], [2, 2]), desc='input_length'),
            ErrorSample((R(rng, 5, 2, 4), t, [5, 5], [3, 2]), desc='target_length'),
            ErrorSample((R(rng, 5, 2, 4), t, [5, 5], [2, 2]), dict(blank=4), desc='blank'),
            ErrorSample((R(rng, 5, 2, 4), t, [5], [2, 2]), desc='lengths_size'),
            ErrorSample((R(rng, 5, 4), t[0], 5, 2), exc=TypeError, desc='int_lengths')]


OPS = [
    OpInfo('nn.functional.mse_loss', F('mse_loss'), with_legacy(regression_samples()),
           errors=regression_errors),
    OpInfo('nn.functional.l1_loss', F('l1_loss'), with_legacy(regression_samples()),
           errors=regression_errors),
    OpInfo('nn.functional.smooth_l1_loss', F('smooth_l1_loss'), smooth_l1_samples,
           errors=smooth_l1_errors),
    OpInfo('nn.functional.huber_loss', F('huber_loss'), huber_samples, errors=huber_errors),
    OpInfo('nn.functional.binary_cross_entropy', F('binary_cross_entropy'), bce_samples,
           errors=bce_errors, domain='input in [0, 1]'),
    OpInfo('nn.functional.binary_cross_entropy_with_logits',
           F('binary_cross_entropy_with_logits'), bce_logits_samples,
           errors=bce_logits_errors),
    OpInfo('nn.functional.soft_margin_loss', F('soft_margin_loss'), soft_margin_samples),
    OpInfo('nn.functional.multilabel_soft_margin_loss', F('multilabel_soft_margin_loss'),
           multilabel_soft_margin_samples),
    OpInfo('nn.functional.nll_loss', F('nll_loss'), nll_samples, errors=nll_errors),
    OpInfo('nn.functional.cross_entropy', F('cross_entropy'), ce_samples, errors=ce_errors),
    OpInfo('nn.functional.multi_margin_loss', F('multi_margin_loss'), multi_margin_samples,
           errors=multi_margin_errors),
    OpInfo('nn.functional.multilabel_margin_loss', F('multilabel_margin_loss'),
           multilabel_margin_samples, errors=multilabel_margin_errors),
    OpInfo('nn.functional.kl_div', F('kl_div'), kl_samples, errors=kl_errors),
    OpInfo('nn.functional.poisson_nll_loss', F('poisson_nll_loss'), poisson_samples),
    OpInfo('nn.functional.gaussian_nll_loss', F('gaussian_nll_loss'), gaussian_samples,
           errors=gaussian_errors),
    OpInfo('nn.functional.hinge_embedding_loss', F('hinge_embedding_loss'), hinge_samples),
    OpInfo('nn.functional.margin_ranking_loss', F('margin_ranking_loss'), ranking_samples,
           errors=ranking_errors),
    OpInfo('nn.functional.cosine_embedding_loss', F('cosine_embedding_loss'),
           cosine_embedding_samples, errors=cosine_embedding_errors),
    OpInfo('nn.functional.triplet_margin_loss', F('triplet_margin_loss'), triplet_samples,
           errors=triplet_errors),
    OpInfo('nn.functional.cosine_similarity', F('cosine_similarity'),
           cosine_similarity_samples, errors=cosine_similarity_errors),
    OpInfo('nn.functional.pairwise_distance', F('pairwise_distance'), pairwise_samples,
           errors=pairwise_errors),
    OpInfo('nn.functional.pdist', F('pdist'), pdist_samples, errors=pdist_errors),
    OpInfo('cdist', cdist, cdist_samples, errors=cdist_errors),
    OpInfo('nn.functional.ctc_loss', ctc, ctc_samples, errors=ctc_errors,
           twice_differentiable=False),   # torch: no derivative for _ctc_loss_backward
    OpInfo('nn.functional.scaled_dot_product_attention', F('scaled_dot_product_attention'),
           sdpa_samples, errors=sdpa_errors),
]


# -- top-level forms (torch.kl_div, torch.margin_ranking_loss, ...): reduction as an int
# (0 none, 1 mean, 2 sum), and 0 by default at top level, unlike nn.functional's 'mean'.

def top(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **k)


def _top_loss_samples(make, small, extra=()):
    """Each reduction positionally after ``extra``, the default, and a float64 sample."""
    def gen(rng):
        args = make(rng)
        s = [Sample(args + extra + (r,), desc=f'reduction_{r}') for r in (0, 1, 2)]
        s.append(Sample(args, desc='default'))
        s.append(Sample(tuple(_f64(a) if isinstance(a, np.ndarray) else a
                              for a in small(rng)) + extra, desc='f64'))
        return s
    return gen


def _bce_args(rng):
    return (R(rng, 3, 4), PROB(rng, 3, 4))


def _kl_args(rng):
    return (R(rng, 3, 4), PROB(rng, 3, 4))


def _pair_sign(rng, *shape):
    return (R(rng, *shape), R(rng, *shape), SIGN(rng, *shape[:1]))


def top_bce_logits_samples(rng):
    # weight and pos_weight come first here, so the reduction goes by keyword
    s = [Sample(_bce_args(rng), dict(reduction=r), desc=f'reduction_{r}') for r in (0, 1, 2)]
    return s + [Sample(_bce_args(rng), desc='default'),
                Sample((_f64(R(rng, 2, 2)), _f64(PROB(rng, 2, 2))), desc='f64'),
                # torch: no gradient for weight / pos_weight, so the values only
                Sample((R(rng, 3, 4), PROB(rng, 3, 4), POS(rng, 4), POS(rng, 4), 1),
                       desc='weight_pos_weight', requires_grad=False)]


def top_kl_samples(rng):
    return _top_loss_samples(_kl_args, lambda r: (R(r, 2, 2), PROB(r, 2, 2)))(rng) + [
        Sample((R(rng, 2, 3), R(rng, 2, 3), 2), dict(log_target=True), desc='log_target')]


def top_kl_errors(rng):
    return [ErrorSample((R(rng, 2, 3), PROB(rng, 2, 3), 0, True), exc=TypeError,
                        desc='log_target_keyword_only')]


def top_hinge_samples(rng):
    return _top_loss_samples(lambda r: (R(r, 3, 4), SIGN(r, 3, 4)),
                             lambda r: (R(r, 2, 2), SIGN(r, 2, 2)), extra=(0.5,))(rng)


def top_ranking_samples(rng):
    return _top_loss_samples(lambda r: (R(r, 4), R(r, 4), SIGN(r, 4)),
                             lambda r: (R(r, 3), R(r, 3), SIGN(r, 3)), extra=(0.2,))(rng)


def top_cosine_embedding_samples(rng):
    return _top_loss_samples(lambda r: _pair_sign(r, 3, 4),
                             lambda r: _pair_sign(r, 2, 2), extra=(0.1,))(rng)


def top_triplet_samples(rng):
    return _top_loss_samples(lambda r: (R(r, 3, 4), R(r, 3, 4), R(r, 3, 4)),
                             lambda r: (R(r, 2, 2), R(r, 2, 2), R(r, 2, 2)),
                             extra=(1.0, 2.0, 1e-6, True))(rng)


def top_poisson_samples(rng):
    counts = lambda *s: np.asarray(rng.integers(0, 4, s), dtype=np.float32)  # noqa: E731
    return [Sample((R(rng, 3, 4), counts(3, 4), True, False, 1e-8, r), desc=f'reduction_{r}')
            for r in (0, 1, 2)] + [
        # the Stirling term of full=True has a kink at target 1: no finite differences
        Sample((POS(rng, 2, 3), counts(2, 3), False, True, 1e-4, 1), desc='not_log_full',
               gradcheck=False),
        Sample((_f64(R(rng, 2, 2)), _f64(counts(2, 2)), True, False, 1e-8, 2), desc='f64')]


def top_poisson_errors(rng):
    return [ErrorSample((R(rng, 3), R(rng, 3)), exc=TypeError, desc='all_arguments_required')]


def top_ctc_samples(rng):
    def log_probs(T, N, C, dtype=np.float32):
        x = rng.standard_normal((T, N, C))
        return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(dtype)
    targets = np.array([[1, 2], [1, 1]])
    return [Sample((log_probs(5, 2, 3), targets, [5, 4], [2, 2]), desc='default'),
            Sample((log_probs(5, 2, 3), targets, [5, 5], [2, 1], 0, 1), desc='mean'),
            Sample((log_probs(4, 2, 3, np.float64), targets, [4, 4], [2, 2], 0, 2, True),
                   desc='f64_sum_zero_infinity', check_grad_fn=False)]


TOPLEVEL_OPS = [
    OpInfo('toplevel.binary_cross_entropy_with_logits',
           top('binary_cross_entropy_with_logits'), top_bce_logits_samples),
    OpInfo('toplevel.kl_div', top('kl_div'), top_kl_samples, errors=top_kl_errors),
    OpInfo('toplevel.hinge_embedding_loss', top('hinge_embedding_loss'), top_hinge_samples),
    OpInfo('toplevel.margin_ranking_loss', top('margin_ranking_loss'), top_ranking_samples),
    OpInfo('toplevel.cosine_embedding_loss', top('cosine_embedding_loss'),
           top_cosine_embedding_samples),
    OpInfo('toplevel.triplet_margin_loss', top('triplet_margin_loss'), top_triplet_samples),
    OpInfo('toplevel.poisson_nll_loss', top('poisson_nll_loss'), top_poisson_samples,
           errors=top_poisson_errors),
    OpInfo('toplevel.ctc_loss', top('ctc_loss'), top_ctc_samples),
]

OPS = OPS + TOPLEVEL_OPS


# -- multi_head_attention_forward and grouped_mm --------------------------------------------------

def W(rng, *shape):
    """A projection weight: small, so float32 gradients keep their digits."""
    return np.asarray(rng.uniform(-0.6, 0.6, shape), dtype=np.float32)


def _mha_args(rng, L=3, S=4, N=2, E=4, kv=False, bias=True):
    """query, key, value, E, num_heads=2, in_proj_weight/bias, bias_k, bias_v, add_zero_attn,
    dropout_p, out_proj_weight/bias: F.multi_head_attention_forward's positional form."""
    return (R(rng, L, N, E), R(rng, S, N, E), R(rng, S, N, E), E, 2, W(rng, 3 * E, E),
            R(rng, 3 * E) if bias else None, R(rng, 1, 1, E) if kv else None,
            R(rng, 1, 1, E) if kv else None, False, 0.0, W(rng, E, E),
            R(rng, E) if bias else None)


def mha(lib, *args, **kwargs):
    """The output, and the weights where there are any (the harness compares tensors)."""
    out, weights = lib.nn.functional.multi_head_attention_forward(*args, **kwargs)
    return out if weights is None else (out, weights)


def mha_samples(rng):
    kpm = rng.random((2, 4)) > 0.7
    kpm[:, 0] = False
    causal = np.triu(np.ones((3, 4), bool), 1)
    with_zero = list(_mha_args(rng))
    with_zero[9] = True
    unbatched = (R(rng, 3, 4), R(rng, 4, 4), R(rng, 4, 4), 4, 2, W(rng, 12, 4), R(rng, 12),
                 None, None, False, 0.0, W(rng, 4, 4), R(rng, 4))
    return [
        Sample(_mha_args(rng), desc='weights'),
        Sample(_mha_args(rng), dict(need_weights=False), desc='no_weights'),
        Sample(_mha_args(rng), dict(average_attn_weights=False), desc='per_head'),
        Sample(_mha_args(rng, kv=True), dict(key_padding_mask=kpm), desc='bias_kv_kpm'),
        Sample(tuple(with_zero), dict(attn_mask=R(rng, 3, 4)), desc='zero_attn_float_mask'),
        Sample(_mha_args(rng, bias=False), dict(attn_mask=causal, need_weights=False,
                                                is_causal=True), desc='causal_no_bias'),
        Sample(_mha_args(rng), dict(attn_mask=R(rng, 4, 3, 4), need_weights=False),
               desc='3d_mask_sdpa'),
        Sample(unbatched, desc='unbatched'),
        Sample(_mha_args(rng, E=4)[:5] + (None,) + _mha_args(rng)[6:],
               dict(use_separate_proj_weight=True, q_proj_weight=W(rng, 4, 4),
                    k_proj_weight=W(rng, 4, 4), v_proj_weight=W(rng, 4, 4)),
               desc='separate_weights'),
        Sample(_mha_args(rng), dict(static_k=R(rng, 4, 5, 2), static_v=R(rng, 4, 5, 2)),
               desc='static_kv'),
        Sample(_mha_args(rng, E=4), dict(training=False, need_weights=False), desc='eval'),
    ]


def mha_errors(rng):
    args = _mha_args(rng)
    kv = _mha_args(rng, kv=True)
    return [
        ErrorSample((R(rng, 3, 2, 2, 4),) + args[1:], exc=AssertionError, desc='4d_query'),
        ErrorSample(args[:3] + (6,) + args[4:], exc=AssertionError, desc='embed_dim_check'),
        ErrorSample(args[:4] + (3,) + args[5:], exc=AssertionError, desc='heads_divide'),
        ErrorSample(args[:5] + (None,) + args[6:], exc=AssertionError, desc='no_in_proj'),
        ErrorSample(args, dict(attn_mask=R(rng, 3, 3)), desc='2d_mask_shape'),
        ErrorSample(args, dict(attn_mask=R(rng, 2, 3, 4)), desc='3d_mask_shape'),
        ErrorSample(args, dict(attn_mask=R(rng, 3, 4).astype(np.int64)),
                    exc=AssertionError, desc='int_mask'),
        ErrorSample(args, dict(is_causal=True), desc='causal_needs_mask'),
        ErrorSample(args, dict(key_padding_mask=R(rng, 2, 5) > 0), exc=AssertionError,
                    desc='kpm_shape'),
        ErrorSample(kv[:8] + (None,) + kv[9:], exc=AssertionError, desc='bias_k_only'),
        ErrorSample(kv, dict(static_k=R(rng, 4, 4, 2)), exc=AssertionError,
                    desc='bias_with_static'),
        ErrorSample(args, dict(static_k=R(rng, 3, 4, 2)), exc=AssertionError,
                    desc='static_k_heads'),
        ErrorSample(args, dict(static_v=R(rng, 4, 4, 3)), exc=AssertionError,
                    desc='static_v_head_dim'),
        ErrorSample(args, dict(use_separate_proj_weight=True), exc=AssertionError,
                    desc='separate_missing'),
    ]


def _offs(ends):
    return dict(offs=np.asarray(ends, np.int32))


def grouped_mm_samples(rng):
    # float32 only (PyTorch's CPU kernel refuses float64, so no finite-difference check);
    # widths are multiples of 4 (its kernel wants 16-byte strides); offs end at the full
    # length (PyTorch leaves what lies past offs[-1] uninitialised).
    s = [Sample((R(rng, 3, 4, 8), R(rng, 3, 8, 4)), desc='3d_3d'),
         Sample((R(rng, 12, 8), R(rng, 3, 8, 4)), _offs([3, 7, 12]), desc='2d_3d'),
         Sample((R(rng, 12, 8), R(rng, 3, 8, 4)), _offs([0, 7, 12]), desc='2d_3d_empty_group'),
         Sample((R(rng, 3, 4, 8), R(rng, 8, 12)), _offs([4, 4, 12]), desc='3d_2d'),
         Sample((R(rng, 4, 12), R(rng, 12, 8)), _offs([4, 9, 12]), desc='2d_2d'),
         Sample((R(rng, 3, 4, 8), nc(R(rng, 3, 4, 8), TR)), desc='3d_3d_colmajor_b')]
    for x in s:
        x.gradcheck = False
    return s


def grouped_mm_errors(rng):
    a3, b3, a2 = R(rng, 3, 4, 8), R(rng, 3, 8, 4), R(rng, 12, 8)
    return [
        ErrorSample((_f64(a3), _f64(b3)), desc='float64'),
        ErrorSample((a3, b3.astype(np.int32)), desc='int_b'),
        ErrorSample((R(rng, 8), b3), desc='1d'),
        ErrorSample((a3, b3), _offs([1, 2, 4]), desc='3d_offs'),
        ErrorSample((a2, b3), desc='2d_no_offs'),
        ErrorSample((a2, b3), dict(offs=np.asarray([3, 7, 12])), desc='offs_int64'),
        ErrorSample((a2, b3), _offs([[3, 7, 12]]), desc='offs_2d'),
        ErrorSample((a2, b3), _offs([3, 12]), desc='offs_count'),
        ErrorSample((R(rng, 2, 4, 8), b3), desc='groups'),
        ErrorSample((R(rng, 3, 4, 4), b3), desc='contraction'),
        ErrorSample((a3, b3), dict(bias=R(rng, 3, 4)), desc='bias'),
        ErrorSample((a3, b3), dict(out_dtype=DT('float16')), desc='out_dtype'),
    ]


OPS += [
    OpInfo('nn.functional.multi_head_attention_forward', mha,
           mha_samples, errors=mha_errors),
    OpInfo('nn.functional.grouped_mm', F('grouped_mm'), grouped_mm_samples,
           errors=grouped_mm_errors),
]
