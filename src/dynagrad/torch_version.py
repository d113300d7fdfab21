"""``TorchVersion``: the class of ``dynagrad.__version__``, as ``torch.torch_version``.

A str that compares by PEP 440 with strings (``'2.0'``), tuples and lists (``(2, 13)``) and
other versions, and falls back to plain string comparison when the other side does not
parse as a version, as PyTorch's does. The parsing is written here because NumPy is
dynagrad's only runtime dependency (``packaging`` may not be installed).
"""
import functools
import re

__all__ = ['TorchVersion', 'InvalidVersion']

# PEP 440's own pattern (its appendix), for the forms and spellings it normalizes; compiled
# at the first comparison, not at `import dynagrad`
_PATTERN = r'''
    ^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$'''


@functools.cache
def _pattern():
    return re.compile(_PATTERN, re.VERBOSE | re.IGNORECASE)

_PRE = {'alpha': 'a', 'a': 'a', 'beta': 'b', 'b': 'b', 'c': 'rc', 'pre': 'rc', 'preview': 'rc',
        'rc': 'rc'}
_INF = float('inf')


class InvalidVersion(ValueError):
    """The string is not a PEP 440 version."""


def _key(text):
    """A tuple that orders versions as PEP 440 does (packaging's order)."""
    m = _pattern().match(text)
    if m is None:
        raise InvalidVersion(f'Invalid version: {text!r}')
    release = [int(p) for p in m['release'].split('.')]
    while len(release) > 1 and release[-1] == 0:   # 2.13 == 2.13.0
        release.pop()
    pre = (_PRE[m['pre_l'].lower()], int(m['pre_n'] or 0)) if m['pre'] else None
    post = int(m['post_n1'] or m['post_n2'] or 0) if m['post'] else None
    dev = int(m['dev_n'] or 0) if m['dev'] else None
    # a dev release of X sorts before X's pre-releases; no post sorts before any post
    if pre is None and post is None and dev is not None:
        pre_key = ('', -_INF)
    elif pre is None:
        pre_key = ('~', _INF)
    else:
        pre_key = pre
    local = () if m['local'] is None else tuple(
        (int(p), '') if p.isdigit() else (-_INF, p.lower()) for p in re.split(r'[-_.]', m['local']))
    return (int(m['epoch'] or 0), tuple(release), pre_key,
            -_INF if post is None else post, _INF if dev is None else dev, local)


def _other_key(other):
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, (tuple, list)):
        return _key('.'.join(str(p) for p in other))
    raise InvalidVersion(f'{other!r} is not a version')


def _comparison(name, compare):
    def method(self, other):
        try:
            return compare(_key(self), _other_key(other))
        except InvalidVersion:
            # as PyTorch: an unparsable other side ('parrot', None) compares as a str would
            return _as_str(self, other, name)
    method.__name__ = name
    return method


def _as_str(self, other, name):
    result = getattr(str, name)(self, other)
    if result is NotImplemented:
        symbol = {'__lt__': '<', '__le__': '<=', '__gt__': '>', '__ge__': '>='}.get(name)
        if symbol is None:
            return False
        raise TypeError(f"'{symbol}' not supported between instances of 'TorchVersion' and "
                        f"'{type(other).__name__}'")
    return result


class TorchVersion(str):
    """A version string that compares as a version: ``dynagrad.__version__ >= '2.0'``,
    ``dynagrad.__version__ < (2, 14)``."""

    __lt__ = _comparison('__lt__', lambda a, b: a < b)
    __le__ = _comparison('__le__', lambda a, b: a <= b)
    __gt__ = _comparison('__gt__', lambda a, b: a > b)
    __ge__ = _comparison('__ge__', lambda a, b: a >= b)
    __eq__ = _comparison('__eq__', lambda a, b: a == b)
    # != stays str's, as in PyTorch (so '2.13.0' == '2.13' and '2.13.0' != '2.13' both hold)
    __hash__ = str.__hash__
