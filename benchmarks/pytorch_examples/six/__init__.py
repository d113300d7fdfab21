"""A stand-in for ``six``, the Python 2/3 shim some examples still import: on Python 3
``six.moves.urllib`` is the standard library's ``urllib``."""
from . import moves  # noqa: F401
