"""``dynagrad.backends.cuda``: cuBLAS's and scaled-dot-product attention's switches, with a
CPU-only PyTorch's defaults. There is no CUDA: the switches are kept, nothing reads them."""
from ._flags import check_bool, get_float32_matmul_precision, set_float32_matmul_precision


def is_built():
    """Whether dynagrad was built with CUDA: no."""
    return False


class cuBLASModule:
    """``backends.cuda.matmul``: ``allow_tf32`` mirrors the float32 matmul precision (as in
    PyTorch); the reduced-precision reductions are plain flags. Other names are refused."""

    _defaults = {'allow_fp16_reduced_precision_reduction': True,
                 'allow_bf16_reduced_precision_reduction': True,
                 'allow_fp16_accumulation': False}

    def __init__(self):
        object.__setattr__(self, '_values', dict(self._defaults))

    def __getattr__(self, name):
        if name == 'allow_tf32':
            return get_float32_matmul_precision() != 'highest'
        values = self.__dict__['_values']
        if name in values:
            return values[name]
        raise AttributeError(f'Unknown attribute {name}')

    def __setattr__(self, name, value):
        if name == 'allow_tf32':
            check_bool(value, 'set_allow_tf32_cublas')
            set_float32_matmul_precision('high' if value else 'highest')
        elif name in self._values:
            if not isinstance(value, bool):
                raise TypeError(f'{name} expects a bool or a tuple/list of bools, but got '
                                f'{type(value)}')
            self._values[name] = value
        else:
            raise AttributeError(f'Unknown attribute {name}')


matmul = cuBLASModule()

# scaled_dot_product_attention's kernels: all enabled by default, as in PyTorch
_sdp = {'flash': True, 'mem_efficient': True, 'math': True, 'cudnn': True}


def _sdp_switch(kind):
    def enable(enabled):
        _sdp[kind] = check_bool(enabled, f'set_sdp_use_{kind}')

    def is_enabled():
        return _sdp[kind]
    enable.__name__, is_enabled.__name__ = f'enable_{kind}_sdp', f'{kind}_sdp_enabled'
    enable.__doc__ = f"Allow the {kind} attention kernel (kept: there is no CUDA to use it)."
    return enable, is_enabled


enable_flash_sdp, flash_sdp_enabled = _sdp_switch('flash')
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_switch('mem_efficient')
enable_math_sdp, math_sdp_enabled = _sdp_switch('math')
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp_switch('cudnn')


def is_flash_attention_available():
    return False
