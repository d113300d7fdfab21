"""dynagrad.onnx.export: a captured forward written as an ONNX graph, checked by running it
in onnxruntime against dynagrad's own outputs; and what it refuses, before writing."""
import numpy as np
import pytest
import torch

import dynagrad

onnxruntime = pytest.importorskip('onnxruntime')


def test_onnx_is_a_submodule_as_in_torch():
    assert dynagrad.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert issubclass(dynagrad.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


def _mlp():
    dynagrad.manual_seed(0)
    return dynagrad.nn.Sequential(
        dynagrad.nn.Linear(10, 32), dynagrad.nn.ReLU(), dynagrad.nn.Linear(32, 32),
        dynagrad.nn.Tanh(), dynagrad.nn.Linear(32, 5), dynagrad.nn.LogSoftmax(dim=1))


def _run(path, feeds):
    session = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    return session.run(None, feeds)


def test_an_mlp_runs_in_onnxruntime_as_in_dynagrad(tmp_path):
    model = _mlp().eval()
    x = dynagrad.randn(4, 10)
    path = tmp_path / 'mlp.onnx'
    dynagrad.onnx.export(model, (x,), str(path), input_names=['x'], output_names=['logp'],
                         dynamic_axes={'x': {0: 'batch'}, 'logp': {0: 'batch'}})
    for batch in (4, 7):      # the batch dimension was exported as dynamic
        xb = dynagrad.randn(batch, 10)
        got, = _run(path, {'x': xb.numpy()})
        np.testing.assert_allclose(got, model(xb).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_a_function_with_elementwise_ops_and_reshapes(tmp_path):
    w = dynagrad.randn(6, 4)

    def f(x):
        h = (x @ w).sigmoid() * 2.0 - x.sum(1, keepdim=True).exp() / 10
        return h.view(2, 8).transpose(0, 1).softmax(1)
    x = dynagrad.randn(4, 6)
    path = tmp_path / 'f.onnx'
    dynagrad.onnx.export(f, (x,), str(path))
    got, = _run(path, {'input_0': x.numpy()})
    np.testing.assert_allclose(got, f(x).numpy(), rtol=1e-5, atol=1e-6)


def test_a_small_cnn(tmp_path):
    dynagrad.manual_seed(0)
    F = dynagrad.nn.functional
    conv1, conv2 = dynagrad.nn.Conv2d(1, 4, 3, padding=1), dynagrad.nn.Conv2d(4, 6, 3)
    head = dynagrad.nn.Linear(6 * 2 * 2, 3)

    def cnn(x):
        h = F.max_pool2d(F.relu(conv1(x)), 2)
        h = F.max_pool2d(F.relu(conv2(h)), 2, ceil_mode=True)
        return head(h.flatten(1))
    x = dynagrad.randn(2, 1, 10, 10)
    path = tmp_path / 'cnn.onnx'
    dynagrad.onnx.export(cnn, (x,), str(path))
    got, = _run(path, {'input_0': x.numpy()})
    np.testing.assert_allclose(got, cnn(x).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_what_it_cannot_write_is_refused_before_writing(tmp_path):
    up = dynagrad.nn.ConvTranspose2d(1, 2, 3)
    target = tmp_path / 'up.onnx'
    with pytest.raises(dynagrad.onnx.OnnxExporterError, match='no ONNX form for'):
        dynagrad.onnx.export(up, (dynagrad.randn(1, 1, 5, 5),), str(target))
    assert not target.exists()

    def reads(x):
        return x * x.sum().item()
    with pytest.raises(dynagrad.onnx.OnnxExporterError, match=r'Tensor.item\(\)'):
        dynagrad.onnx.export(reads, (dynagrad.ones(2),), str(target))
    assert not target.exists()


def test_the_gpt_workload_in_eval_mode(tmp_path):
    from benchmarks import workloads as W
    s = W.GPT_SIZES['smoke']
    model = W.gpt_model(dynagrad, s, use_sdpa=False).eval()
    idx = dynagrad.tensor(np.random.default_rng(0).integers(0, s['vocab'], (2, s['context'])))
    path = tmp_path / 'gpt.onnx'
    dynagrad.onnx.export(model, (idx,), str(path), input_names=['idx'])
    got = _run(path, {'idx': idx.numpy()})[0]
    with dynagrad.no_grad():
        expected = model(idx)[0].numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('example_batch', [1, 3])
def test_a_dynamic_batch_reaches_the_views_of_the_gpt_workload(tmp_path, example_batch):
    from benchmarks import workloads as W
    s = W.GPT_SIZES['smoke']
    model = W.gpt_model(dynagrad, s, use_sdpa=False).eval()
    rng = np.random.default_rng(0)
    idx = dynagrad.tensor(rng.integers(0, s['vocab'], (example_batch, s['context'])))
    path = tmp_path / 'gpt.onnx'
    dynagrad.onnx.export(model, (idx,), str(path), input_names=['idx'],
                         output_names=['logits'], dynamic_axes={'idx': {0: 'batch'},
                                                                'logits': {0: 'batch'}})
    for batch in (2, 5, 1):     # view(B, L, heads, C // heads) follows the batch
        x = rng.integers(0, s['vocab'], (batch, s['context']))
        got = _run(path, {'idx': x})[0]
        with dynagrad.no_grad():
            expected = model(dynagrad.tensor(x))[0].numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_a_batch_the_graph_fixes_and_other_dynamic_dimensions_are_refused(tmp_path):
    def f(x):
        return x * 2 + dynagrad.ones(x.shape[0], 1)       # a constant the size of the batch
    x = dynagrad.randn(3, 4)
    with pytest.raises(dynagrad.onnx.OnnxExporterError, match='fixes it'):
        dynagrad.onnx.export(f, (x,), str(tmp_path / 'f.onnx'), input_names=['x'],
                             dynamic_axes={'x': {0: 'batch'}})
    with pytest.raises(dynagrad.onnx.OnnxExporterError, match='only the first'):
        dynagrad.onnx.export(lambda x: x * 2, (x,), str(tmp_path / 'g.onnx'),
                             input_names=['x'], dynamic_axes={'x': {1: 'width'}})
    assert not (tmp_path / 'f.onnx').exists() and not (tmp_path / 'g.onnx').exists()


@pytest.mark.parametrize('key', ['1:, ..., ::2', 'None, :, 2, None', '..., 0', '-1, 1:3'])
def test_basic_indexing(tmp_path, key):
    f = eval(f'lambda x: x[{key}] * 2')       # noqa: S307 - a test's own literal
    x = dynagrad.randn(3, 4, 5)
    dynagrad.onnx.export(f, (x,), str(tmp_path / 'i.onnx'))
    got, = _run(tmp_path / 'i.onnx', {'input_0': x.numpy()})
    np.testing.assert_array_equal(got, f(x).numpy())


@pytest.mark.parametrize('layer', [
    lambda nn: nn.LSTM(8, 12, num_layers=2),
    lambda nn: nn.GRU(8, 12, num_layers=2),
    lambda nn: nn.GRU(8, 6, bidirectional=True),
    lambda nn: nn.RNN(8, 12, num_layers=2),
    lambda nn: nn.RNN(8, 6, nonlinearity='relu', bidirectional=True)],
    ids=['lstm', 'gru', 'gru-bidirectional', 'rnn-tanh', 'rnn-relu-bidirectional'])
def test_a_recurrent_language_model(tmp_path, layer):
    dynagrad.manual_seed(0)
    nn = dynagrad.nn

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.rnn = nn.Embedding(30, 8), layer(nn)
            self.out = nn.Linear(12, 30)

        def forward(self, x):
            h, _ = self.rnn(self.emb(x))
            return self.out(h)
    model = LM().eval()
    x = dynagrad.tensor(np.random.default_rng(0).integers(0, 30, (7, 3)))
    path = tmp_path / 'lm.onnx'
    dynagrad.onnx.export(model, (x,), str(path))
    got, = _run(path, {'input_0': x.numpy()})
    with dynagrad.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-4, atol=1e-5)
