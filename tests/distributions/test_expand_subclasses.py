"""distribution.py's _expanded: wrappers (Independent, TransformedDistribution,
MixtureSameFamily) hold what they wrap before the base initializer runs, as torch's expand
orders it, so subclasses whose properties read it (pyro's) expand as on torch."""
import pytest
import torch
import torch.distributions as TD

import dynagrad
import dynagrad.distributions as MD


def subclass(D, base):
    class ReadsItsWrappedDistribution(base):
        @property
        def _validate_args(self):
            return self.inner()._validate_args

        @_validate_args.setter
        def _validate_args(self, value):
            self.inner()._validate_args = value

        def inner(self):
            return self.__dict__.get('base_dist') or self.__dict__['_mixture_distribution']
    return ReadsItsWrappedDistribution


def made(lib, D, which):
    loc, scale = lib.zeros(3, 2), lib.ones(3, 2)
    if which == 'independent':
        return subclass(D, D.Independent)(D.Normal(loc, scale), 1)
    if which == 'transformed':
        return subclass(D, D.TransformedDistribution)(D.Normal(loc, scale),
                                                      [D.transforms.ExpTransform()])
    return subclass(D, D.MixtureSameFamily)(D.Categorical(logits=lib.zeros(3, 2)),
                                            D.Normal(loc, scale))


@pytest.mark.parametrize('which', ['independent', 'transformed', 'mixture'])
def test_expand_of_a_subclass_reading_its_wrapped_distribution_as_torch(which):
    mine, theirs = made(dynagrad, MD, which), made(torch, TD, which)
    shape = [4] + list(theirs.batch_shape)
    me, te = mine.expand(shape), theirs.expand(shape)
    assert type(me) is type(mine) and type(te) is type(theirs)
    assert (tuple(me.batch_shape), tuple(me.event_shape)) == \
        (tuple(te.batch_shape), tuple(te.event_shape))
    assert me._validate_args == te._validate_args
    x = 0.5 * torch.ones(te.batch_shape + te.event_shape)
    assert me.log_prob(dynagrad.tensor(x.numpy())).numpy() == pytest.approx(
        te.log_prob(x).numpy(), rel=1e-6)
