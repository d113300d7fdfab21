"""``Distribution``: the base class of every distribution (shapes, validation, sampling
entry points, the derived statistics)."""
import warnings

import dynagrad as dg
from ..tensor import Tensor
from . import constraints
from .utils import lazy_property

__all__ = ['Distribution']


class Distribution:
    """Base class for probability distributions.

    ``batch_shape`` indexes independent (not identically parameterised) distributions,
    ``event_shape`` is the shape of one draw. Parameters are checked against
    ``arg_constraints`` and values against ``support`` when validation is on (the default
    unless Python runs with -O; see ``set_default_validate_args``).
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on (True) or off (False) for distributions created
        without ``validate_args``."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=dg.Size(), event_shape=dg.Size(), validate_args=None):
        self._batch_shape = dg.Size(batch_shape)
        self._event_shape = dg.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f'{self.__class__} does not define `arg_constraints`. Please set '
                              '`arg_constraints = {}` or initialize the distribution with '
                              '`validate_args=False` to turn off validation.')
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue   # skip constraints that cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                              lazy_property):
                    continue   # skip checking lazily-constructed args
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f'Expected parameter {param} ({type(value).__name__} of shape '
                        f'{tuple(value.shape)}) of distribution {self!r} to satisfy the '
                        f'constraint {constraint!r}, but found invalid values:\n{value}')
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution (sharing parameters) with ``batch_shape`` broadcast."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """The constraint each parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint a value must satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f'{self.__class__} does not implement mean')

    @property
    def mode(self):
        raise NotImplementedError(f'{self.__class__} does not implement mode')

    @property
    def variance(self):
        raise NotImplementedError(f'{self.__class__} does not implement variance')

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=dg.Size()):
        """A draw of shape ``sample_shape + batch_shape + event_shape``, outside the graph."""
        with dg.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=dg.Size()):
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn('sample_n will be deprecated. Use .sample((n,)) instead', UserWarning)
        return self.sample(dg.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return dg.exp(self.entropy())

    def _extended_shape(self, sample_shape=dg.Size()):
        if not isinstance(sample_shape, dg.Size):
            sample_shape = dg.Size(sample_shape)
        return dg.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f'The right-most size of value must match event_shape: '
                             f'{value.size()} vs {self._event_shape}.')
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f'Value is not broadcastable with batch_shape+event_shape: '
                                 f'{actual_shape} vs {expected_shape}.')
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f'{self.__class__} does not define `support` to enable sample '
                          'validation. Please initialize the distribution with '
                          '`validate_args=False` to turn off validation.')
            return
        assert support is not None
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                f'Expected value argument ({type(value).__name__} of shape '
                f'{tuple(value.shape)}) to be within the support ({support!r}) of the '
                f'distribution {self!r}, but found invalid values:\n{value}')

    def _expanded(self, cls, batch_shape, _instance=None, params=(), prepare=None):
        """What every ``expand`` shares: a new ``cls`` (or ``_instance``, when a subclass
        expands into its own) set up for ``batch_shape`` with this one's event shape and
        validation setting, holding each of ``params`` that this one holds (see
        ``_expand_params``). ``prepare(new, batch_shape)`` sets what a family wraps (its base
        distribution) before the base initializer runs, as PyTorch's expand orders it: a
        subclass's properties may read them there (pyro's ``_validate_args`` reads
        ``base_dist``). Families then add whatever else they carry."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = dg.Size(batch_shape)
        self._expand_params(new, batch_shape, params)
        if prepare is not None:
            prepare(new, batch_shape)
        super(cls, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_params(self, new, batch_shape, params):
        """Put on ``new`` each of ``params`` that this one holds (not the lazily derived
        ones it has not computed), broadcast to ``batch_shape`` with its own trailing
        (event or matrix) dimensions kept."""
        for name in params:
            if name in self.__dict__:
                value = self.__dict__[name]
                trailing = tuple(value.shape[len(self._batch_shape):])
                setattr(new, name, value.expand(tuple(batch_shape) + trailing))

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f'Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom '
                '__init__ method must also define a custom .expand() method.')
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        param_names = [k for k, _ in self.arg_constraints.items() if k in self.__dict__]
        args_string = ', '.join(
            f'{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}'
            for p in param_names)
        return self.__class__.__name__ + '(' + args_string + ')'
