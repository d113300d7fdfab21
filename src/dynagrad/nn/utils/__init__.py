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
from . import parametrize, parametrizations, stateless, fusion, memory_format  # noqa: F401
from . import init  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)
from .init import skip_init  # noqa: F401
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401
                            convert_conv3d_weight_memory_format)
