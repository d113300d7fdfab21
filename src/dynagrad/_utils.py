"""``dynagrad._utils``: the rebuild functions a pickle of PyTorch tensors names.

``pickle.dumps(tensor)`` in PyTorch writes ``torch._utils._rebuild_tensor_v2`` (and
``_rebuild_parameter`` for a Parameter) over a storage that ``torch.storage._load_from_bytes``
reads; under ``python -m dynagrad.run`` those names resolve here and in ``dynagrad.storage``,
so ``pickle.load`` of such a pickle gives dynagrad tensors. They are the functions
``dynagrad.load`` uses for the same names (serialization/rebuild.py), which check every
argument a file can hold.
"""
from .serialization.rebuild import (rebuild_device_tensor_from_cpu_tensor,
                                    rebuild_meta_tensor_no_storage,
                                    rebuild_parameter, rebuild_parameter_with_state,
                                    rebuild_tensor, rebuild_tensor_v2, rebuild_tensor_v3)

_rebuild_tensor = rebuild_tensor
_rebuild_tensor_v2 = rebuild_tensor_v2
_rebuild_tensor_v3 = rebuild_tensor_v3
_rebuild_parameter = rebuild_parameter
_rebuild_parameter_with_state = rebuild_parameter_with_state
_rebuild_device_tensor_from_cpu_tensor = rebuild_device_tensor_from_cpu_tensor
_rebuild_meta_tensor_no_storage = rebuild_meta_tensor_no_storage
