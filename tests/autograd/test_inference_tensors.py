"""Inference tensors: what inference_mode makes, and what PyTorch refuses to do with it
outside the mode. Each behaviour is run on both libraries and compared."""
import copy
import threading

import numpy as np
import pytest
import torch

import dynagrad as dg

SAVE_ERROR = 'Inference tensors cannot be saved for backward'
WRITE_ERROR = 'Inplace update to inference tensor outside InferenceMode is not allowed'
REQUIRES_GRAD_ERROR = ('Setting requires_grad=True on inference tensor outside InferenceMode '
                       'is not allowed')


def made_inside(lib, make):
    with lib.inference_mode():
        return make(lib)


def both(fn):
    """``fn(lib)`` on each library."""
    return fn(torch), fn(dg)


@pytest.mark.parametrize('make', [
    lambda lib: lib.ones(3),
    lambda lib: lib.tensor([1.0, 2.0]),
    lambda lib: lib.arange(3.0),
    lambda lib: lib.zeros(2, dtype=lib.int64),
    lambda lib: lib.ones(3) * 2,                       # an op's output
    lambda lib: lib.ones(4).split(2)[0],               # an op with several outputs
    lambda lib: lib.ones(2, 3).max(1)[1],              # several outputs, not views
    lambda lib: lib.ones(3).new_ones(2),
    lambda lib: lib.empty(2),
    lambda lib: lib.Tensor(2, 3),
    lambda lib: lib.Tensor([1.0, 2.0]),
], ids=['ones', 'tensor', 'arange', 'int_zeros', 'mul', 'split', 'max_indices', 'new_ones',
        'empty', 'legacy_size', 'legacy_data'])
def test_tensors_made_inside_inference_mode_are_inference_tensors(make):
    ref, got = both(lambda lib: made_inside(lib, make).is_inference())
    assert ref is True and got is True


def test_tensors_made_outside_or_under_no_grad_are_normal():
    def check(lib):
        with lib.no_grad():
            a = lib.ones(3) * 2
        with lib.inference_mode():
            with lib.inference_mode(False):
                b = lib.ones(3) + 1
        with lib.inference_mode(False):
            c = lib.ones(2)
        return [t.is_inference() for t in (lib.ones(2), a, b, c, lib.Tensor(2))]
    ref, got = both(check)
    assert ref == got == [False] * 5


def test_normal_tensor_used_inside_stays_normal_and_its_views_are_normal():
    def check(lib):
        x = lib.ones(3)
        with lib.inference_mode():
            y = x * 2
            v = x.view(3)
            parts = x.split(1)
            x.add_(1)                       # writing a normal tensor inside is allowed
            inside = x.is_inference()
        v.add_(1)                           # and the view can be written outside
        return (inside, x.is_inference(), y.is_inference(), v.is_inference(),
                [p.is_inference() for p in parts], x.tolist())
    ref, got = both(check)
    assert ref == got == (False, False, True, False, [False] * 3, [3.0, 3.0, 3.0])


def test_views_and_aliases_of_inference_tensors_are_inference_tensors():
    def check(lib):
        a = made_inside(lib, lambda lib: lib.ones(2, 3))
        return [t.is_inference() for t in (
            a.view(6), a[0], a[:, 1:], a.t(), a.unbind()[0], a.detach(), a.data,
            a.float(), a.contiguous())]
    ref, got = both(check)
    assert ref == got == [True] * 9


def test_clone_and_new_results_outside_are_normal_tensors():
    def check(lib):
        a = made_inside(lib, lambda lib: lib.ones(3))
        return [t.is_inference() for t in (a.clone(), a + 1, a.double(), a.sum(),
                                           lib.ones_like(a), copy.deepcopy(a))]
    ref, got = both(check)
    assert ref == got == [False] * 6


@pytest.mark.parametrize('compute', [
    lambda w, a: w * a,
    lambda w, a: a.mul(w),
    lambda w, a: w @ a,
    lambda w, a: (w + a) * a,
], ids=['mul', 'mul_method', 'matmul', 'saved_by_second_op'])
def test_saving_an_inference_tensor_for_backward_raises(compute):
    for lib in (torch, dg):
        a = made_inside(lib, lambda lib: lib.ones(3))
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=SAVE_ERROR):
            compute(w, a)


def test_ops_that_save_nothing_of_it_work_and_the_clone_works_in_autograd():
    def check(lib):
        a = made_inside(lib, lambda lib: lib.full((3,), 2.0))
        w = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (w + a).sum() + (w * a.clone()).sum()
        y.backward()
        return y.item(), w.grad.tolist()
    ref, got = both(check)
    assert ref == got


def test_inference_tensors_can_be_used_freely_under_no_grad_and_inside():
    def check(lib):
        a = made_inside(lib, lambda lib: lib.ones(3))
        w = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            r1 = (w * a).requires_grad
        with lib.inference_mode():
            r2 = (w * a).requires_grad
        return r1, r2
    ref, got = both(check)
    assert ref == got == (False, False)


def test_custom_function_saving_an_inference_tensor_raises_when_recording():
    def function(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_backward(k)
                return x * k

            @staticmethod
            def backward(ctx, g):
                k, = ctx.saved_tensors
                return g * k, None
        return Scale

    for lib in (torch, dg):
        Scale = function(lib)
        a = made_inside(lib, lambda lib: lib.ones(3))
        assert Scale.apply(lib.ones(3), a).is_inference() is False   # nothing recorded
        with lib.inference_mode():
            assert Scale.apply(lib.ones(3), a).is_inference() is True
        with pytest.raises(RuntimeError, match=SAVE_ERROR):
            Scale.apply(lib.ones(3, requires_grad=True), a)


@pytest.mark.parametrize('write', [
    lambda a: a.add_(1),
    lambda a: a.mul_(2),
    lambda a: a.zero_(),
    lambda a: a.fill_(3.0),
    lambda a: a.copy_(a.clone()),
    lambda a: a.__setitem__(0, 5.0),
    lambda a: a.__setitem__(a > 0, 5.0),
    lambda a: a.__iadd__(1),
    lambda a: a.view(3).add_(1),
    lambda a: a.clamp_(0, 1),
], ids=['add_', 'mul_', 'zero_', 'fill_', 'copy_', 'setitem', 'setitem_mask', 'iadd',
        'through_view', 'clamp_'])
def test_inplace_update_outside_inference_mode_raises_before_writing(write):
    for lib in (torch, dg):
        a = made_inside(lib, lambda lib: lib.ones(3))
        with pytest.raises(RuntimeError, match=WRITE_ERROR):
            write(a)
        with lib.no_grad():                          # no_grad is not inference mode
            with pytest.raises(RuntimeError, match=WRITE_ERROR):
                write(a)
        if lib is dg:   # dynagrad refuses before writing (PyTorch's CPU kernels write first)
            assert a.tolist() == [1.0, 1.0, 1.0]


def test_inplace_update_inside_inference_mode_is_allowed():
    def check(lib):
        a = made_inside(lib, lambda lib: lib.ones(3))
        with lib.inference_mode():
            a.add_(1)
            a[0] = 7.0
        return a.tolist(), a.is_inference()
    ref, got = both(check)
    assert ref == got == ([7.0, 2.0, 2.0], True)


def test_inplace_op_saving_an_inference_operand_raises_before_writing():
    for lib in (torch, dg):
        a = made_inside(lib, lambda lib: lib.full((3,), 2.0))
        y = lib.ones(3, requires_grad=True) * 1
        with pytest.raises(RuntimeError, match=SAVE_ERROR):
            y.mul_(a)
        assert y.tolist() == [1.0, 1.0, 1.0], lib


def test_requires_grad_on_an_inference_tensor():
    for lib in (torch, dg):
        a = made_inside(lib, lambda lib: lib.ones(3))
        with pytest.raises(RuntimeError, match=REQUIRES_GRAD_ERROR):
            a.requires_grad_()
        with pytest.raises(RuntimeError, match=REQUIRES_GRAD_ERROR):
            a.requires_grad = True
        with pytest.raises(RuntimeError, match=REQUIRES_GRAD_ERROR):
            lib.nn.Parameter(a)
        assert a.requires_grad_(False).requires_grad is False
        # the dtype is checked first, as in PyTorch
        i = made_inside(lib, lambda lib: lib.ones(3, dtype=lib.int64))
        with pytest.raises(RuntimeError, match='only Tensors of floating point'):
            i.requires_grad_()
        with lib.inference_mode():
            assert a.requires_grad_().requires_grad is True


def test_modules_built_inside_inference_mode_hold_inference_parameters():
    def check(lib):
        with lib.inference_mode():
            layer = lib.nn.Linear(2, 2)
        return layer.weight.is_inference(), layer.weight.requires_grad
    ref, got = both(check)
    assert ref == got == (True, True)


def test_version_of_an_inference_tensor_raises():
    for lib in (torch, dg):
        a = made_inside(lib, lambda lib: lib.ones(3))
        with pytest.raises(RuntimeError, match='Inference tensors do not track version counter'):
            a._version
        assert lib.ones(3)._version == 0


def test_assigning_data_carries_the_kind():
    def check(lib):
        b = lib.ones(3)
        c = made_inside(lib, lambda lib: lib.ones(3))
        b.data = c
        d = made_inside(lib, lambda lib: lib.ones(3))
        d.data = lib.zeros(3)
        return b.is_inference(), d.is_inference()
    ref, got = both(check)
    assert ref == got == (True, False)


def test_top_level_is_inference_and_decorator_form():
    def check(lib):
        @lib.inference_mode()
        def make():
            return lib.ones(2)

        @lib.inference_mode
        def make_bare():
            return lib.ones(2)
        return lib.is_inference(make()), make_bare().is_inference(), lib.is_inference(
            lib.ones(2))
    ref, got = both(check)
    assert ref == got == (True, True, False)


def test_inference_mode_in_another_thread_does_not_mark_this_threads_tensors():
    inside, release = threading.Event(), threading.Event()

    def hold():
        with dg.inference_mode():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert inside.wait(5)
        assert dg.ones(2).is_inference() is False
        assert (dg.ones(2) * 2).is_inference() is False
    finally:
        release.set()
        worker.join()
    with dg.inference_mode():
        assert dg.ones(2).is_inference() is True
    assert dg.ones(2).is_inference() is False


def test_values_computed_inside_match_torch():
    def check(lib):
        with lib.inference_mode():
            x = lib.arange(6.0).reshape(2, 3)
            y = (x.exp() * 2).softmax(1).sum(0)
        return y.numpy().copy()
    ref, got = both(check)
    np.testing.assert_allclose(got, ref, rtol=1e-5)


@pytest.mark.parametrize('write', ['unsqueeze_', 'transpose_', 'resize_', 'set_'])
def test_metadata_writes_to_an_inference_tensor_outside_the_mode_raise_as_torch(write):
    def attempt(lib):
        with lib.inference_mode():
            a = lib.ones(2, 3)
        fn = {'unsqueeze_': lambda: a.unsqueeze_(0), 'transpose_': lambda: a.transpose_(0, 1),
              'resize_': lambda: a.resize_(6), 'set_': lambda: a.set_(lib.zeros(2))}[write]
        with pytest.raises(RuntimeError, match='Inplace update to inference tensor outside'):
            fn()
    attempt(torch)
    attempt(dg)


# -- grad mode turned on inside inference_mode: still nothing is recorded ------------------
def _grad_on_inside(lib, turn_on):
    """Grad mode turned on inside inference_mode, by ``enable_grad`` or ``set_grad_enabled``."""
    return lib.enable_grad() if turn_on == 'enable_grad' else lib.set_grad_enabled(True)


@pytest.mark.parametrize('turn_on', ['enable_grad', 'set_grad_enabled'])
@pytest.mark.parametrize('make', [
    lambda lib, a: a * 2,
    lambda lib, a: (a.exp() + a).sum(),
    lambda lib, a: a.split(1)[0] * 1,                   # several outputs
    lambda lib, a: a.max(0)[0] * 1,
    lambda lib, a: lib.ones(2, requires_grad=True) * 3,  # a leaf made inside
], ids=['mul', 'chain', 'split', 'max', 'leaf_inside'])
def test_grad_mode_on_inside_inference_mode_records_nothing_as_torch(turn_on, make):
    def check(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            with _grad_on_inside(lib, turn_on):
                mode = (lib.is_grad_enabled(), lib.is_inference_mode_enabled())
                out = make(lib, a)
            after = lib.is_grad_enabled()
        return (mode, after, out.requires_grad, out.grad_fn is None, out.is_inference()), \
            out.detach().numpy().copy()
    (ref, ref_value), (got, got_value) = both(check)
    assert got == ref
    np.testing.assert_allclose(got_value, ref_value, rtol=1e-6)
    assert ref[2:5] == (False, True, True)    # the torch facts this pins


def test_leaf_made_inside_with_grad_mode_on_requires_grad_as_torch():
    def check(lib):
        with lib.inference_mode(), lib.enable_grad():
            leaf = lib.ones(2, requires_grad=True)
        return leaf.requires_grad, leaf.is_inference(), leaf.grad_fn is None
    ref, got = both(check)
    assert got == ref == (True, True, True)


def test_backward_inside_inference_mode_with_grad_on_finds_no_graph_as_torch():
    def attempt(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.inference_mode(), lib.enable_grad():
            with pytest.raises(RuntimeError, match='element 0 of tensors does not require grad'):
                (a * 2).sum().backward()
    attempt(torch)
    attempt(dg)


def test_in_place_and_numpy_inside_inference_mode_with_grad_on_as_torch():
    def check(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.inference_mode(), lib.enable_grad():
            a.add_(1)          # a leaf that requires grad: allowed, nothing recorded
            a.resize_(2)
            with pytest.raises(RuntimeError, match="Can't call numpy"):
                a.numpy()
        return a.grad_fn is None, a.requires_grad, a.detach().numpy().tolist()
    ref, got = both(check)
    assert got == ref


def test_nested_grad_modes_inside_inference_mode_restore_as_torch():
    def check(lib):
        a = lib.ones(2, requires_grad=True)
        seen = []
        with lib.inference_mode():
            with lib.enable_grad():
                with lib.no_grad():
                    seen.append(lib.is_grad_enabled())
                seen.append(lib.is_grad_enabled())
                with lib.inference_mode(False):   # leaving the mode records again
                    seen.append(lib.is_grad_enabled())
                    out = a * 2
                    seen += [out.grad_fn is not None, out.is_inference()]
                seen.append(lib.is_grad_enabled())
                seen.append((a * 2).grad_fn is None)
            seen.append(lib.is_grad_enabled())
        with lib.no_grad(), lib.inference_mode(False):
            seen.append(lib.is_grad_enabled())
        seen.append(lib.is_grad_enabled())
        return seen
    ref, got = both(check)
    assert got == ref


def test_set_grad_enabled_as_a_decorator_inside_inference_mode_as_torch():
    def check(lib):
        a = lib.ones(2, requires_grad=True)

        @lib.set_grad_enabled(True)
        def f():
            return lib.is_grad_enabled(), (a * 2).grad_fn is None

        with lib.inference_mode():
            inside = f()
            return inside, lib.is_grad_enabled()
    ref, got = both(check)
    assert got == ref
