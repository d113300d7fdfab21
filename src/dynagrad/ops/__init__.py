"""dynagrad's ops, one module per family.

Each family module lists its public functions in ``__all__`` (``dynagrad.<name>``) and
registers its Tensor methods (in-place forms and operators included) where it defines the
function they bind, with ``dynagrad.tensor.method``: importing a family registers them.
"""
from . import arithmetic, unary, comparison, clamping, pointwise  # noqa: F401
from . import reduction, shape, strided, indexing, linalg, random, creation, statistics
from . import complex_numbers
from .arithmetic import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .clamping import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .strided import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .complex_numbers import *  # noqa: F401,F403
from . import sparse  # noqa: E402  (sparse COO tensors: after the dense ops they extend)
from .sparse import *  # noqa: F401,F403

# The elementwise families (``pointwise`` gathers them under its old name), then the rest.
FAMILIES = (arithmetic, unary, comparison, clamping, reduction, shape, strided, indexing, linalg,
            random, statistics, complex_numbers)
__all__ = [name for module in FAMILIES + (creation, sparse) for name in module.__all__]
# torch.stft and torch.istft are top-level; the rest of the spectral ops is dynagrad.fft
from . import spectral  # noqa: E402
from .spectral import stft, istft  # noqa: E402
__all__ += spectral.TOP_LEVEL
# torch._foreach_*: loops over the single ops above, so imported after every family
from . import foreach  # noqa: E402
from .foreach import *  # noqa: F401,F403,E402
__all__ += foreach.__all__

# NumPy's keyword names (axis=, keepdims=) and the keywords of *sizes parameters, as torch's
# argument parser takes them: last, once every family has bound its functions and methods.
import sys as _sys  # noqa: E402
from . import keywords as _keywords  # noqa: E402
_keywords.install(FAMILIES + (creation, sparse, spectral, _sys.modules[__name__]))

# out=: after the keyword aliases, so that the out= wrapper is the outermost frame
from . import out as _out  # noqa: E402
_out.install(FAMILIES + (spectral, _sys.modules[__name__]))
