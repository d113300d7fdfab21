"""dynagrad.onnx: importable at a program's top; export says why it cannot run yet."""
import pytest
import torch

import dynagrad


def test_onnx_is_a_submodule_as_in_torch():
    assert dynagrad.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    assert issubclass(dynagrad.onnx.OnnxExporterError, RuntimeError)
    assert issubclass(torch.onnx.OnnxExporterError, RuntimeError)


def test_export_raises_clearly_and_writes_nothing(tmp_path):
    target = tmp_path / 'model.onnx'
    with pytest.raises(dynagrad.onnx.OnnxExporterError, match='not implemented yet'):
        dynagrad.onnx.export(dynagrad.nn.Linear(2, 2), (dynagrad.ones(1, 2),), str(target))
    assert not target.exists()
