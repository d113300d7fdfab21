"""dynagrad's ops, one module per family.

Each family module lists its public functions in ``__all__`` (``dynagrad.<name>``) and
registers its Tensor methods (in-place forms and operators included) where it defines the
function they bind, with ``dynagrad.tensor.method``: importing a family registers them.
"""
from . import arithmetic, unary, comparison, clamping, pointwise  # noqa: F401
from . import reduction, ordering, shape, strided, indexing, linalg, random, creation
from . import statistics
from . import complex_numbers
from .arithmetic import *  # noqa: F401,F403
from .unary import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .clamping import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .ordering import *  # noqa: F401,F403
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
FAMILIES = (arithmetic, unary, comparison, clamping, reduction, ordering, shape, strided, indexing,
            linalg, random, statistics, complex_numbers)
__all__ = [name for module in FAMILIES + (creation, sparse) for name in module.__all__]
# torch.stft and torch.istft are top-level; the rest of the spectral ops is dynagrad.fft
from . import spectral  # noqa: E402
from .spectral import stft, istft  # noqa: E402
__all__ += spectral.TOP_LEVEL
# torch._foreach_*: loops over the single ops above, so imported after every family
from . import foreach  # noqa: E402
from .foreach import *  # noqa: F401,F403,E402
__all__ += foreach.__all__


# The function forms that take out= in PyTorch (the elementwise factories' and add, sub,
# mul, div have it in their own signatures). Rules of the result's dtype against out's
# (see out_args): PyTorch's casting rule for the elementwise ops, reductions and joins
# that compute through a cast; out's own dtype for factories; the same dtype for the rest.
from .out_args import give_out, EXACT, FACTORY  # noqa: E402
give_out(globals(), '''
    pow remainder fmod copysign floor_divide logit xlogy square mean max min true_divide
    mvlgamma polygamma addcmul addcdiv cat concat concatenate stack hstack vstack dstack
    column_stack row_stack nansum nanmean logsumexp cumsum cumprod kron outer all addr
    clamp_max clamp_min inner matrix_power std var''')
give_out(globals(), 'sum prod median nanmedian', needs_dim=True)
give_out(globals(), '''
    addbmm addmm addmv alias_copy aminmax amax amin any argmax argmin as_strided_copy
    baddbmm bernoulli bmm bucketize chain_matmul clamp clip complex conj_physical cross
    cummax cummin detach_copy diag diagonal_copy diff dot expand_copy float_power frexp
    gather ger frobenius_norm heaviside histc histogram index_add inverse index_copy
    index_reduce index_select isin kthvalue ldexp lerp logcumsumexp masked_select matmul mm
    mode msort multinomial mv nan_to_num nanquantile narrow_copy nonzero nonzero_static
    norm normal permute_copy polar quantile renorm round scatter scatter_add scatter_reduce
    searchsorted select_copy signbit slice_copy slice_scatter slogdet sort squeeze_copy
    t_copy take take_along_dim tensordot topk transpose_copy tril triu unfold_copy
    unsqueeze_copy values_copy vdot view_as_complex_copy view_as_real_copy view_copy
    where''', EXACT)
give_out(globals(), 'arange empty eye full linspace logspace ones rand randint randn randperm '
                    'range zeros', FACTORY)
del give_out, EXACT, FACTORY

# NumPy's keyword names (axis=, keepdims=) and the keywords of *sizes parameters, as torch's
# argument parser takes them: last, once every family has bound its functions and methods.
import sys as _sys  # noqa: E402
from . import keywords as _keywords  # noqa: E402
_keywords.install(FAMILIES + (creation, sparse, spectral, _sys.modules[__name__]))
from . import linalg_solvers as _linalg_solvers  # noqa: E402  (its top-level names: torch.*)
_linalg_solvers.TOP_LEVEL = {name: _keywords.wrapper(name, fn)
                             for name, fn in _linalg_solvers.TOP_LEVEL.items()}
