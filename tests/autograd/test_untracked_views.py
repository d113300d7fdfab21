"""The view ops' untracked path (autograd.function.untracked_view): when nothing records,
view, reshape, transpose, split, chunk and everyday slicing build their result directly.
Each result must be what Op.apply makes: the same values and strides, one storage and one
version counter with the source, the same base and replay steps, the same flags in no_grad
and inference_mode; and a tensor that needs a gradient still takes the recorded path."""
import numpy as np
import pytest
import torch

import dynagrad as dg
from dynagrad.autograd import function
from dynagrad.ops import indexing, shape

CASES = {
    'view': lambda x: x.view(2, 3, 4),
    'view -1': lambda x: x.view(-1, 4),
    'reshape': lambda x: x.reshape(6, 4),
    'transpose': lambda x: x.transpose(0, 1),
    'transpose negative dims': lambda x: x.transpose(-1, -2),
    'split': lambda x: x.split(2, dim=1),
    'split sizes': lambda x: x.split([1, 3], dim=-1),
    'chunk': lambda x: x.chunk(3, dim=0),
    'slice': lambda x: x[:, -1, :],
    'int and None': lambda x: x[1, None],
    'ellipsis': lambda x: x[..., 2],
}


def _source():
    return dg.tensor(np.arange(24, dtype=np.float32).reshape(6, 4))


def _pieces(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.fixture
def recorded_path(monkeypatch):
    """Op.apply's result for the same call: the untracked path switched off."""
    def run(make, x):
        monkeypatch.setattr(shape, 'untracked', lambda t: False)
        monkeypatch.setattr(indexing, 'untracked', lambda t: False)
        try:
            return make(x)
        finally:
            monkeypatch.undo()
    return run


def _torch_source():
    return torch.arange(24, dtype=torch.float32).reshape(6, 4)


@pytest.mark.parametrize('name', CASES)
@pytest.mark.parametrize('mode', ['no_grad', 'grad on, no requires_grad', 'inference_mode'])
def test_untracked_result_is_the_recorded_one(name, mode, recorded_path):
    make = CASES[name]
    if name in ('slice', 'int and None', 'ellipsis'):
        def make(x, make=CASES[name]):    # 3-d views of the 2-d source
            return make(x.view(2, 3, 4)) if name != 'view' else make(x)
    ctx = {'no_grad': dg.no_grad, 'inference_mode': dg.inference_mode}.get(mode)
    tctx = {'no_grad': torch.no_grad, 'inference_mode': torch.inference_mode}.get(mode)
    with ctx() if ctx else dg.enable_grad():
        x = _source()
        fast = _pieces(make(x))
        want = _pieces(recorded_path(make, _source()))
    with tctx() if tctx else torch.enable_grad():
        expect = _pieces(make(_torch_source()))
    assert len(fast) == len(want) == len(expect)
    for f, w, e in zip(fast, want, expect):
        np.testing.assert_array_equal(f.numpy(), e.numpy())
        assert f.stride() == w.stride()
        # (a size-1 dim's stride is NumPy's 0 where torch reports a row-major one: as before)
        assert [s for s, n in zip(f.stride(), f.shape) if n > 1] == [
            s for s, n in zip(e.stride(), e.shape) if n > 1]
        assert f._base is x and w._base is not None
        assert f._view_fn == w._view_fn
        assert f.output_nr == w.output_nr
        assert f._output_nr == w._output_nr
        assert not f.requires_grad and f.grad_fn is None
        assert f.is_inference() == w.is_inference() == e.is_inference()
        assert np.shares_memory(f.numpy(), x.numpy())
    if mode != 'inference_mode':
        before = fast[0]._version
        x.add_(1)           # one version counter: the view sees the write and its count
        assert fast[0]._version == x._version == before + 1
        np.testing.assert_array_equal(fast[0].numpy(), _pieces(make(x))[0].numpy())


def test_a_tensor_needing_a_gradient_records():
    x = _source().requires_grad_()
    for name, make in CASES.items():
        for piece in _pieces(make(x.view(2, 3, 4) if name in ('slice', 'int and None', 'ellipsis')
                                  else x)):
            assert piece.requires_grad and piece.grad_fn is not None, name
    y = x.view(3, 8).transpose(0, 1)[1:, :2]
    y.sum().backward()
    t = _torch_source().requires_grad_()
    t.view(3, 8).transpose(0, 1)[1:, :2].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_writing_an_untracked_view_of_a_leaf_that_needs_grad_behaves_as_torch():
    # made under no_grad from a leaf that needs a gradient, then written with grad mode on
    # and off: the same outcome, values and flags as torch
    for grad_mode in (True, False):
        outcomes = []
        for L, x in ((dg, _source()), (torch, _torch_source())):
            x.requires_grad_()
            with L.no_grad():
                v = x.view(4, 6)
            try:
                with L.set_grad_enabled(grad_mode):
                    v.mul_(2)
                outcome = ('ok', v.requires_grad, x.detach().numpy().tolist())
            except RuntimeError as e:
                outcome = ('error', 'no_grad' in str(e) or 'view' in str(e))
            outcomes.append(outcome)
        assert outcomes[0] == outcomes[1], grad_mode


def test_a_parameter_or_subclass_takes_the_recorded_path():
    p = dg.nn.Parameter(_source())
    with dg.no_grad():
        assert not function.untracked(p)
        v = p.view(24)
    assert v._base is p and type(v) is dg.Tensor
