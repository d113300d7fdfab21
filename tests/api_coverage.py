"""How much of PyTorch's public API dynagrad has: the namespaces, what is left out on
purpose (with the reason), and what is not done yet.

``python -m tests.api_coverage`` prints the figures; tests/test_api_coverage.py fails when a
public name of the installed torch is neither in dynagrad, nor left out below, nor listed
as not yet done, and when a name listed as not yet done has arrived (so the list shrinks).
The README's coverage figure comes from here.
"""
import fnmatch
import importlib
import types

# (label, torch module path, dynagrad module path); 'torch.Tensor' is the class
NAMESPACES = [
    ('torch', 'torch', 'dynagrad'),
    ('torch.Tensor', 'torch.Tensor', 'dynagrad.Tensor'),
    ('torch.nn', 'torch.nn', 'dynagrad.nn'),
    ('torch.nn.Module', 'torch.nn.Module', 'dynagrad.nn.Module'),
    ('torch.nn.functional', 'torch.nn.functional', 'dynagrad.nn.functional'),
    ('torch.nn.init', 'torch.nn.init', 'dynagrad.nn.init'),
    ('torch.nn.utils', 'torch.nn.utils', 'dynagrad.nn.utils'),
    ('torch.nn.utils.parametrize', 'torch.nn.utils.parametrize', 'dynagrad.nn.utils.parametrize'),
    ('torch.nn.utils.parametrizations', 'torch.nn.utils.parametrizations',
     'dynagrad.nn.utils.parametrizations'),
    ('torch.nn.utils.stateless', 'torch.nn.utils.stateless', 'dynagrad.nn.utils.stateless'),
    ('torch.nn.utils.fusion', 'torch.nn.utils.fusion', 'dynagrad.nn.utils.fusion'),
    ('torch.optim', 'torch.optim', 'dynagrad.optim'),
    ('torch.optim.lr_scheduler', 'torch.optim.lr_scheduler', 'dynagrad.optim.lr_scheduler'),
    ('torch.optim.swa_utils', 'torch.optim.swa_utils', 'dynagrad.optim.swa_utils'),
    ('torch.autograd', 'torch.autograd', 'dynagrad.autograd'),
    ('torch.distributions', 'torch.distributions', 'dynagrad.distributions'),
    ('torch.testing', 'torch.testing', 'dynagrad.testing'),
    ('torch.optim.Optimizer', 'torch.optim.Optimizer', 'dynagrad.optim.Optimizer'),
    ('torch.Generator', 'torch.Generator', 'dynagrad.Generator'),
    ('torch.special', 'torch.special', 'dynagrad.special'),
    ('torch.linalg', 'torch.linalg', 'dynagrad.linalg'),
    ('torch.fft', 'torch.fft', 'dynagrad.fft'),
]

OUT_OF_SCOPE = 'out of scope (issue 16): quantized tensors, nested tensors, cuDNN/MKLDNN/FBGEMM'
JIT = 'TorchScript/JIT and torch.compile internals (the compile issue, 19)'
COMPLEX32 = ('complex32 (chalf): NumPy has no complex type of two float16 halves, and '
             'PyTorch itself calls its support experimental')
COMPRESSED = ('compressed sparse layouts (CSR, CSC, BSR, BSC): dynagrad has sparse COO tensors '
              'only; their constructors, conversions and index accessors are not done')
SEGMENT = ('segment_reduce: a reduction over segments of a dense tensor, not a sparse-tensor op, '
           'and not done')
DEVICE = 'devices, streams, serialization internals (the real-programs and CUDA issues, 14/20)'
INTERNAL = "PyTorch's internals (not documented API)"
NO_DTYPE = ('sub-byte and bit-packed dtypes: PyTorch itself can only allocate tensors of them '
            'on the CPU (no conversion, no kernel); they are placeholders for tensor subclasses')

# namespace -> [(fnmatch pattern, reason)]
LEFT_OUT = {
    'torch': [
        # TorchScript / JIT / compile
        *[(n, JIT) for n in (
            'AliasDb', 'AnyType', 'Argument', 'ArgumentSpec', 'AwaitType', 'Block', 'BoolType',
            'BufferDict', 'CallStack', 'ClassType', 'Code', 'CompilationUnit',
            'CompleteArgumentSpec', 'ComplexType', 'ConcreteModuleType*', 'DeepCopyMemoTable',
            'DeviceObjType', 'DictType', 'EnumType', 'ErrorReport', 'ExecutionPlan',
            'FileCheck', 'FloatType', 'FunctionSchema', 'Future', 'FutureType', 'Gradient',
            'Graph', 'GraphExecutorState', 'IODescriptor', 'InferredType', 'IntType',
            'InterfaceType', 'JITException', 'ListType', 'LiteScriptModule', 'LockingLogger',
            'LoggerBase', 'ModuleDict', 'NoneType', 'NoopLogger', 'NumberType', 'OperatorInfo',
            'OptionalType', 'ParameterDict', 'PyObjectType', 'RRefType', 'Script*',
            'StaticModule', 'StreamObjType', 'StringType', 'TensorType', 'TracingState',
            'TupleType', 'Type', 'UnionType', 'Use', 'Value', 'import_ir_module*',
            'merge_type_from_type_comment', 'parse_ir', 'parse_schema', 'parse_type_comment',
            'unify_type_list', 'fork', 'wait', 'while_loop', 'cond', 'Sym*', 'Node',
            'sym_*', 'classproperty', 'PRIVATE_OPS', 'TYPE_CHECKING',
            'profiler_allow_cudagraph_cupti_lazy_reinit_cuda12')],
        # dispatcher, build and loader internals
        *[(n, INTERNAL) for n in (
            'DispatchKey', 'DispatchKeySet', 'ExcludeDispatchKeyGuard', 'DisableTorchFunction',
            'DisableTorchFunctionSubclass', 'Tag', 'Capsule', 'StorageBase', 'FatalError', 'AggregationType',
            'AVG', 'SUM', 'BenchmarkConfig', 'BenchmarkExecutionStats', 'ThroughputBenchmark',
            'USE_GLOBAL_DEPS', 'USE_RTLD_GLOBAL_WITH_LIBTORCH', 'compiled_with_cxx11_abi',
            'get_file_path', 'prepare_multiprocessing_environment', 'slice_inverse',
            'get_autocast_ipu_dtype', 'get_autocast_xla_dtype', 'is_autocast_ipu_enabled',
            'is_autocast_xla_enabled', 'set_autocast_ipu_dtype', 'set_autocast_ipu_enabled',
            'set_autocast_xla_dtype', 'set_autocast_xla_enabled', 'legacy_contiguous_format')],
        # the per-device kernels SyncBatchNorm's multi-GPU path calls (dynagrad's SyncBatchNorm
        # reduces its statistics through dynagrad.distributed instead)
        *[(n, INTERNAL) for n in ('batch_norm_stats', 'batch_norm_elemt',
                                  'batch_norm_backward_elemt', 'batch_norm_backward_reduce',
                                  'batch_norm_gather_stats*', 'batch_norm_update_stats')],
        # quantization, vendor kernels, nested tensors
        *[(n, OUT_OF_SCOPE) for n in (
            'q*int*', 'quint*', 'qint*', 'quantize_*', 'quantized_*', 'dequantize', 'q_*',
            'qscheme', 'int_repr', 'fake_quantize_*', 'fused_moving_avg_obs_fake_quant',
            'choose_qparams_optimized', 'per_channel_*', 'per_tensor_*', 'cudnn_*',
            'miopen_*', 'mkldnn_*', 'fbgemm_*', 'jagged', 'Q*Storage', 'empty_quantized')],
        *[(n, NO_DTYPE) for n in ('bit', 'bits*', 'float4_*', 'int1', 'int2', 'int3',
                                  'int4', 'int5', 'int6', 'int7', 'uint1', 'uint2', 'uint3',
                                  'uint4', 'uint5', 'uint6', 'uint7')],
        *[(n, COMPLEX32) for n in ('complex32', 'chalf')],
        *[(n, COMPRESSED) for n in ('sparse_csr_tensor', 'sparse_csc_tensor',
                                    'sparse_bsr_tensor', 'sparse_bsc_tensor',
                                    'sparse_compressed_tensor', 'ccol_indices_copy',
                                    'col_indices_copy', 'crow_indices_copy',
                                    'row_indices_copy')],
        ('segment_reduce', SEGMENT),
        *[(n, DEVICE) for n in ('Stream', 'Event',
                                'DeserializationStorageContext',
                                'SerializationStorageContext', 'PyTorchFileReader',
                                'PyTorchFileWriter')],
    ],
    'torch.Tensor': [
        *[(n, COMPRESSED) for n in ('ccol_indices', 'col_indices', 'crow_indices',
                                    'row_indices', 'to_sparse_csr', 'to_sparse_csc',
                                    'to_sparse_bsr', 'to_sparse_bsc')],
        *[(n, OUT_OF_SCOPE) for n in ('dequantize', 'int_repr', 'q_*', 'qscheme',
                                      'to_mkldnn', 'to_padded_tensor')],
        ('chalf', COMPLEX32),
        *[(n, DEVICE) for n in ('pin_memory', 'record_stream')],
        ('index', "functorch's first-class dimensions (the functional-transforms issue, 17)"),
        ('slice_inverse', INTERNAL),
    ],
    'torch.nn.functional': [
        ('assert_int_or_pair', INTERNAL),
    ],
}

# Within issue 16's scope and not done yet: the issue stays open while these remain.
NOT_YET = {
}


def torch_names(path):
    """The public names of a torch namespace: its ``__all__``, the classes and functions
    ``dir`` shows that the namespace itself defines (not those it imported from elsewhere),
    the submodules named in SUBMODULES, and for ``torch`` itself its constants (dtypes,
    layouts, ``pi``)."""
    obj = _resolve(path)
    if isinstance(obj, type):
        return {n for n in dir(obj) if not n.startswith('_')}
    names = set(getattr(obj, '__all__', ())) | set(SUBMODULES.get(path, ()))
    for name in dir(obj):
        value = getattr(obj, name, None)
        if name.startswith('_') or name in names or isinstance(value, types.ModuleType):
            continue
        if callable(value):
            module = getattr(value, '__module__', None) or ''
            # torch.linalg's functions are its C extension's (torch._C._linalg)
            if module.startswith(path) or (path == 'torch.linalg'
                                           and module.startswith('torch._C._linalg')):
                names.add(name)
        elif path == 'torch':
            names.add(name)
    return {n for n in names if not n.startswith('_')
            and not isinstance(getattr(obj, n, None), types.ModuleType) or n in
            SUBMODULES.get(path, ())}


# sub-namespaces a program reaches through their parent (``nn.utils.parametrize``)
SUBMODULES = {
    'torch.nn.utils': ('parametrize', 'parametrizations', 'stateless', 'fusion', 'rnn'),
    'torch.optim': ('lr_scheduler', 'swa_utils'),
    'torch.distributions': ('constraints', 'transforms', 'kl'),
}


def _resolve(path):
    try:
        return importlib.import_module(path)
    except ImportError:
        parent, _, attr = path.rpartition('.')
        return getattr(importlib.import_module(parent), attr)


def _has(path, name):
    try:
        obj = _resolve(path)
    except (ImportError, AttributeError):
        return False
    return hasattr(obj, name)


def left_out_reason(label, name):
    for pattern, reason in LEFT_OUT.get(label, ()):
        if fnmatch.fnmatchcase(name, pattern):
            return reason
    return None


def survey():
    """[(label, names, implemented, left_out, not_yet, unaccounted, arrived)]"""
    rows = []
    for label, torch_path, dg_path in NAMESPACES:
        names = torch_names(torch_path)
        implemented = {n for n in names if _has(dg_path, n)}
        missing = names - implemented
        left_out = {n for n in missing if left_out_reason(label, n)}
        not_yet = NOT_YET.get(label, set()) & missing
        arrived = NOT_YET.get(label, set()) & implemented
        rows.append((label, names, implemented, left_out, not_yet,
                     missing - left_out - not_yet, arrived))
    return rows


def report(rows):
    lines = ['| namespace | public names | in dynagrad | left out | not yet |',
             '|---|--:|--:|--:|--:|']
    total = [0, 0, 0, 0]
    for label, names, implemented, left_out, not_yet, unaccounted, _ in rows:
        counts = [len(names), len(implemented), len(left_out), len(not_yet) + len(unaccounted)]
        total = [a + b for a, b in zip(total, counts)]
        lines.append(f'| {label} | ' + ' | '.join(map(str, counts)) + ' |')
    lines.append('| all | ' + ' | '.join(map(str, total)) + ' |')
    in_scope = total[0] - total[2]
    lines.append(f'\n{total[1]} of the {in_scope} names in scope ({100 * total[1] / in_scope:.0f}%)'
                 f'; {total[2]} left out on purpose.')
    return '\n'.join(lines)


if __name__ == '__main__':
    rows = survey()
    print(report(rows))
    for label, *_, unaccounted, arrived in rows:
        if unaccounted:
            print(f'\n{label}: not in dynagrad, not listed: {" ".join(sorted(unaccounted))}')
