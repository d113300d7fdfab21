"""``dynagrad.cuda``, ``accelerator``, ``mps`` and ``backends`` answer as torch does on this
CPU-only machine: the same values, the same defaults, the same error types and messages
(named for dynagrad). Where torch's own answer is an accident of its build, the test says
what dynagrad does instead."""
import pytest
import torch

import dynagrad as dg
from dynagrad.backends import cpu as dg_cpu
from torch_outcomes import dynagrad_spelling, outcome


def same_outcome(build):
    (a_kind, a), (b_kind, b) = outcome(lambda: build(dg)), outcome(lambda: build(torch))
    assert a_kind is b_kind, (a_kind, a, b_kind, b)
    if b_kind == 'ok':
        if isinstance(b, torch.device):
            assert repr(a) == repr(b)
        else:
            assert a == b, (a, b)
    else:
        assert dynagrad_spelling(b) in a, (a, b)


# -- dynagrad.cuda -------------------------------------------------------------------------

CUDA_CALLS = {
    'is_available': lambda c: c.is_available(),
    'device_count': lambda c: c.device_count(),
    'is_initialized': lambda c: c.is_initialized(),
    'manual_seed': lambda c: c.manual_seed(1),
    'manual_seed_float': lambda c: c.manual_seed(1.5),
    'manual_seed_str': lambda c: c.manual_seed('x'),
    'manual_seed_all': lambda c: c.manual_seed_all(1),
    'seed': lambda c: c.seed(),
    'seed_all': lambda c: c.seed_all(),
    'initial_seed': lambda c: c.initial_seed(),
    'get_rng_state': lambda c: c.get_rng_state(),
    'get_rng_state_all': lambda c: c.get_rng_state_all(),
    'set_rng_state_all': lambda c: c.set_rng_state_all([]),
    'synchronize': lambda c: c.synchronize(),
    'current_device': lambda c: c.current_device(),
    'get_device_name': lambda c: c.get_device_name(),
    'get_device_name_0': lambda c: c.get_device_name(0),
    'get_device_capability': lambda c: c.get_device_capability(),
    'get_device_properties': lambda c: c.get_device_properties(0),
    'mem_get_info': lambda c: c.mem_get_info(),
    'init': lambda c: c.init(),
    'ipc_collect': lambda c: c.ipc_collect(),
    'current_stream': lambda c: c.current_stream(),
    'set_per_process_memory_fraction': lambda c: c.set_per_process_memory_fraction(0.5),
    'empty_cache': lambda c: c.empty_cache(),
    'memory_allocated': lambda c: c.memory_allocated(),
    'memory_allocated_device': lambda c: c.memory_allocated('cuda:0'),
    'max_memory_allocated': lambda c: c.max_memory_allocated(),
    'memory_reserved': lambda c: c.memory_reserved(),
    'max_memory_reserved': lambda c: c.max_memory_reserved(),
    'memory_stats': lambda c: dict(c.memory_stats()),
    'is_bf16_supported': lambda c: c.is_bf16_supported(),
    'is_bf16_supported_no_emulation': lambda c: c.is_bf16_supported(including_emulation=False),
    'is_tf32_supported': lambda c: c.is_tf32_supported(),
    'get_arch_list': lambda c: c.get_arch_list(),
    'set_device_negative': lambda c: c.set_device(-1),
    'set_device_no_index': lambda c: c.set_device('cuda'),
    'set_device_cpu': lambda c: c.set_device('cpu'),
    'set_device_none': lambda c: c.set_device(None),
    'device_cpu': lambda c: c.device('cpu'),
    'device_enter': lambda c: c.device(0).__enter__(),
    'device_enter_negative': lambda c: c.device(-1).__enter__(),
}


@pytest.mark.parametrize('name', CUDA_CALLS)
def test_cuda_answers_as_torch_without_cuda(name):
    same_outcome(lambda L: CUDA_CALLS[name](L.cuda))


@pytest.mark.parametrize('call', [
    lambda c: c.set_device(0), lambda c: c.set_device('cuda:0'),
    lambda c: c.reset_peak_memory_stats(), lambda c: c.reset_max_memory_allocated(),
    lambda c: c.reset_accumulated_memory_stats()])
def test_cuda_calls_torch_fails_on_by_accident_raise_the_cuda_error(call):
    # torch raises AttributeError here (its C module lacks the CUDA functions); dynagrad
    # raises the error every other CUDA-only call raises
    with pytest.raises(AssertionError, match='not compiled with CUDA enabled'):
        call(dg.cuda)


def test_cuda_device_of_a_cpu_tensor_is_a_no_op():
    with dg.cuda.device_of(dg.zeros(1)):
        pass


def test_cuda_submodules_load_on_demand():
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        dg.cuda.nonexistent
    with pytest.raises(AttributeError):
        dg.cuda._private


def test_the_usual_device_line_picks_the_cpu():
    for L in (dg, torch):
        device = L.device('cuda' if L.cuda.is_available() else 'cpu')
        assert L.ones(2, device=device).device == device


# -- dynagrad.accelerator ------------------------------------------------------------------

ACCELERATOR_CALLS = {
    'is_available': lambda a: a.is_available(),
    'current_accelerator': lambda a: a.current_accelerator(),
    'current_accelerator_checked': lambda a: a.current_accelerator(check_available=True),
    'device_count': lambda a: a.device_count(),
    'current_device_index': lambda a: a.current_device_index(),
    'set_device_index': lambda a: a.set_device_index(0),
    'synchronize': lambda a: a.synchronize(),
    'empty_cache': lambda a: a.empty_cache(),
    'memory_allocated': lambda a: a.memory_allocated(),
    'max_memory_allocated': lambda a: a.max_memory_allocated(),
    'memory_reserved': lambda a: a.memory_reserved(),
    'reset_peak_memory_stats': lambda a: a.reset_peak_memory_stats(),
    'device_index_enter': lambda a: a.device_index(0).__enter__(),
    'device_index_none': lambda a: a.device_index(None).__enter__(),
}


@pytest.mark.parametrize('name', ACCELERATOR_CALLS)
def test_accelerator_answers_as_torch_without_one(name):
    same_outcome(lambda L: ACCELERATOR_CALLS[name](L.accelerator))


def test_the_accelerator_device_line_picks_the_cpu():
    for L in (dg, torch):
        acc = L.accelerator.current_accelerator()
        device = acc if L.accelerator.is_available() else L.device('cpu')
        assert str(device) == 'cpu'


# -- dynagrad.mps --------------------------------------------------------------------------

MPS_CALLS = {
    'is_available': lambda m: m.is_available(),
    'device_count': lambda m: m.device_count(),
    'manual_seed': lambda m: m.manual_seed(1),
    'seed': lambda m: m.seed(),
    'get_rng_state': lambda m: m.get_rng_state(),
    'synchronize': lambda m: m.synchronize(),
    'empty_cache': lambda m: m.empty_cache(),
    'set_per_process_memory_fraction': lambda m: m.set_per_process_memory_fraction(0.5),
    'current_allocated_memory': lambda m: m.current_allocated_memory(),
    'driver_allocated_memory': lambda m: m.driver_allocated_memory(),
    'recommended_max_memory': lambda m: m.recommended_max_memory(),
}


@pytest.mark.parametrize('name', MPS_CALLS)
def test_mps_answers_as_torch_without_metal(name):
    same_outcome(lambda L: MPS_CALLS[name](L.mps))


# -- dynagrad.backends ---------------------------------------------------------------------

DEFAULTS = {
    'cudnn.enabled': lambda b: b.cudnn.enabled,
    'cudnn.benchmark': lambda b: b.cudnn.benchmark,
    'cudnn.deterministic': lambda b: b.cudnn.deterministic,
    'cudnn.allow_tf32': lambda b: b.cudnn.allow_tf32,
    'cudnn.benchmark_limit': lambda b: b.cudnn.benchmark_limit,
    'cudnn.is_available': lambda b: b.cudnn.is_available(),
    'cudnn.version': lambda b: b.cudnn.version(),
    'mps.is_available': lambda b: b.mps.is_available(),
    'mps.is_built': lambda b: b.mps.is_built(),
    'mps.is_macos_or_newer': lambda b: b.mps.is_macos_or_newer(14, 0),
    'mps.is_macos13_or_newer': lambda b: b.mps.is_macos13_or_newer(),
    'cuda.is_built': lambda b: b.cuda.is_built(),
    'cuda.matmul.allow_tf32': lambda b: b.cuda.matmul.allow_tf32,
    'cuda.matmul.fp16_reduction': lambda b: b.cuda.matmul.allow_fp16_reduced_precision_reduction,
    'cuda.matmul.bf16_reduction': lambda b: b.cuda.matmul.allow_bf16_reduced_precision_reduction,
    'cuda.matmul.fp16_accumulation': lambda b: b.cuda.matmul.allow_fp16_accumulation,
    'cuda.matmul.unknown': lambda b: b.cuda.matmul.foo,
    'cuda.flash_sdp_enabled': lambda b: b.cuda.flash_sdp_enabled(),
    'cuda.mem_efficient_sdp_enabled': lambda b: b.cuda.mem_efficient_sdp_enabled(),
    'cuda.math_sdp_enabled': lambda b: b.cuda.math_sdp_enabled(),
    'cuda.cudnn_sdp_enabled': lambda b: b.cuda.cudnn_sdp_enabled(),
    'cuda.is_flash_attention_available': lambda b: b.cuda.is_flash_attention_available(),
    'mkldnn.enabled': lambda b: b.mkldnn.enabled,
    'mkldnn.deterministic': lambda b: b.mkldnn.deterministic,
    'float32_matmul_precision': lambda b: b.get_float32_matmul_precision(),
}


@pytest.mark.parametrize('name', DEFAULTS)
def test_backends_defaults_as_torch_cpu_build(name):
    same_outcome(lambda L: DEFAULTS[name](L.backends if name != 'float32_matmul_precision'
                                          else L))


def test_cpu_capability_as_torch():
    ours, theirs = dg.backends.cpu.get_cpu_capability(), torch.backends.cpu.get_cpu_capability()
    if theirs.startswith('SVE'):
        assert ours == 'DEFAULT'        # NumPy does not report the SVE vector length
    else:
        assert ours == theirs


def test_cpu_capability_is_capped_by_the_environment(monkeypatch):
    monkeypatch.setattr(dg_cpu, '_numpy_cpu_features',
                        lambda: {f: True for f in ('AVX512F', 'AVX512BW', 'AVX512VL',
                                                   'AVX512DQ', 'AVX2', 'FMA3')})
    assert dg.backends.cpu.get_cpu_capability() == 'AVX512'
    monkeypatch.setenv('ATEN_CPU_CAPABILITY', 'avx2')
    assert dg.backends.cpu.get_cpu_capability() == 'AVX2'
    monkeypatch.setattr(dg_cpu, '_numpy_cpu_features', lambda: {'AVX2': True})
    monkeypatch.delenv('ATEN_CPU_CAPABILITY')
    assert dg.backends.cpu.get_cpu_capability() == 'DEFAULT'    # AVX2 needs FMA3 too


def test_mkldnn_is_not_available():
    # torch's CPU build links oneDNN; dynagrad computes with NumPy and says so
    assert dg.backends.mkldnn.is_available() is False


@pytest.fixture
def restore_flags():
    saved = {L: (L.backends.cudnn.benchmark, L.backends.cudnn.deterministic,
                 L.backends.cudnn.enabled, L.backends.cudnn.allow_tf32,
                 L.get_float32_matmul_precision(), L.backends.cuda.flash_sdp_enabled(),
                 L.backends.mkldnn.enabled) for L in (dg, torch)}
    yield
    for L, (bench, det, enabled, tf32, precision, flash, mkldnn) in saved.items():
        L.backends.cudnn.benchmark, L.backends.cudnn.deterministic = bench, det
        L.backends.cudnn.enabled, L.backends.cudnn.allow_tf32 = enabled, tf32
        L.set_float32_matmul_precision(precision)
        L.backends.cuda.enable_flash_sdp(flash)
        L.backends.mkldnn.enabled = mkldnn


def test_setting_flags_is_accepted_and_kept(restore_flags):
    for L in (dg, torch):
        L.backends.cudnn.benchmark = True
        L.backends.cudnn.deterministic = True
        L.backends.cuda.enable_flash_sdp(False)
        L.backends.mkldnn.enabled = False
        L.backends.cudnn.foo = 3                  # a plain module accepts new names
    for read in (lambda L: L.backends.cudnn.benchmark, lambda L: L.backends.cudnn.deterministic,
                 lambda L: L.backends.cuda.flash_sdp_enabled(),
                 lambda L: L.backends.mkldnn.enabled, lambda L: L.backends.cudnn.foo):
        same_outcome(read)


@pytest.mark.parametrize('write', [
    lambda L: setattr(L.backends.cudnn, 'benchmark', 1),
    lambda L: setattr(L.backends.cudnn, 'enabled', 1),
    lambda L: setattr(L.backends.cudnn, 'deterministic', 'yes'),
    lambda L: setattr(L.backends.mkldnn, 'enabled', 1),
    lambda L: setattr(L.backends.mkldnn, 'deterministic', 1),
    lambda L: setattr(L.backends.cuda.matmul, 'allow_tf32', 1),
    lambda L: setattr(L.backends.cuda.matmul, 'allow_fp16_reduced_precision_reduction', 1),
    lambda L: setattr(L.backends.cuda.matmul, 'foo', True),
    lambda L: L.backends.cuda.enable_math_sdp(1),
    lambda L: L.backends.cuda.enable_mem_efficient_sdp(1),
])
def test_flags_refuse_non_bools_as_torch(write, restore_flags):
    (a_kind, a), (b_kind, b) = outcome(lambda: write(dg)), outcome(lambda: write(torch))
    assert a_kind is b_kind and b_kind != 'ok', (a, b)
    assert b.split(' expects')[-1] in a or b in a   # the setter's name differs in places


@pytest.mark.filterwarnings('ignore:TF32 acceleration on top of oneDNN')   # torch's own
def test_flags_context_managers_restore(restore_flags):
    for L in (dg, torch):
        L.backends.cudnn.benchmark = True
        with L.backends.cudnn.flags(enabled=False, deterministic=True):
            inside = (L.backends.cudnn.enabled, L.backends.cudnn.deterministic,
                      L.backends.cudnn.benchmark)
        after = (L.backends.cudnn.enabled, L.backends.cudnn.deterministic,
                 L.backends.cudnn.benchmark)
        assert inside == (False, True, False) and after == (True, False, True), L
        with L.backends.mkldnn.flags(enabled=False):
            assert L.backends.mkldnn.enabled is False
        assert L.backends.mkldnn.enabled is True


def test_allow_tf32_follows_the_float32_matmul_precision(restore_flags):
    for precision in ('high', 'medium', 'highest'):
        for L in (dg, torch):
            L.set_float32_matmul_precision(precision)
        same_outcome(lambda L: L.backends.cuda.matmul.allow_tf32)
        same_outcome(lambda L: L.get_float32_matmul_precision())
    dg.backends.cuda.matmul.allow_tf32 = True
    assert dg.get_float32_matmul_precision() == 'high'
    dg.backends.cuda.matmul.allow_tf32 = False
    assert dg.get_float32_matmul_precision() == 'highest'
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        dg.set_float32_matmul_precision('bad')
    assert dg.get_float32_matmul_precision() == 'highest'
