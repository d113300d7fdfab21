"""``dynagrad.onnx``: importable, as programs import ``torch.onnx`` at their top.

Exporting a model needs its graph captured once, which belongs to ``dynagrad.compile`` (not
written yet); until then ``export`` raises a clear error instead of writing a wrong file.
"""

__all__ = ['export', 'is_in_onnx_export', 'OnnxExporterError']


class OnnxExporterError(RuntimeError):
    """Raised by ``export``: what PyTorch raises when an export fails."""


def export(model, args=(), f=None, *extra, **kwargs):
    raise OnnxExporterError(
        'dynagrad.onnx.export is not implemented yet: exporting needs the model captured as a '
        'graph, which comes with dynagrad.compile. Save the weights with dynagrad.save (they '
        'load in PyTorch, which can export them) in the meantime.')


def is_in_onnx_export():
    return False
