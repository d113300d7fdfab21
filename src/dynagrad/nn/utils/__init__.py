"""dynagrad.nn.utils: helpers for training (recurrent-sequence packing, gradient clipping,
parametrizations, weight and spectral norm, fusion, functional calls)."""
from . import rnn  # noqa: F401
from .rnn import (  # noqa: F401
                  PackedSequence,
                  pack_padded_sequence,
                  pack_sequence,
                  pad_packed_sequence,
                  pad_sequence,
)
from . import clip_grad, convert_parameters  # noqa: F401,E402
from .clip_grad import (clip_grad_norm_, clip_grad_value_, get_total_norm,  # noqa: F401,E402
                        clip_grads_with_norm_, clip_grad_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401,E402
# eager: each module shares its name with the function it defines, and the function must win
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401,E402
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401,E402
from ...lazy import lazy_exports  # noqa: E402

# parametrizations, functional calls and fusion load on first use
__getattr__, __dir__ = lazy_exports(__name__, {
    'parametrize': 'parametrize', 'parametrizations': 'parametrizations',
    'stateless': 'stateless', 'fusion': 'fusion', 'memory_format': 'memory_format',
    'init': 'init', 'fuse_conv_bn_eval': 'fusion', 'fuse_conv_bn_weights': 'fusion',
    'fuse_linear_bn_eval': 'fusion', 'fuse_linear_bn_weights': 'fusion',
    'skip_init': 'init', 'convert_conv2d_weight_memory_format': 'memory_format',
    'convert_conv3d_weight_memory_format': 'memory_format'})
