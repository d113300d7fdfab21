"""``dynagrad._dynamo.eval_frame``: where ``torch._dynamo`` keeps ``OptimizedModule``, the
class libraries test compiled modules against (accelerate's ``is_compiled_module``)."""
from ..compiler import OptimizedModule  # noqa: F401
