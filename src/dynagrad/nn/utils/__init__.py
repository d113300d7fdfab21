"""dynagrad.nn.utils: helpers for training (recurrent-sequence packing, gradient clipping)."""
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
                        clip_grads_with_norm_)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401,E402
