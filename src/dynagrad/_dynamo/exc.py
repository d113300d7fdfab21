"""``torch._dynamo.exc``: the exception types libraries catch around compiled calls."""

__all__ = ['TorchDynamoException', 'Unsupported', 'InternalTorchDynamoError',
           'BackendCompilerFailed', 'RecompileError']


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """What PyTorch raises where its tracer cannot go; dynagrad's capture never raises it
    (it ends the capture and runs eagerly, or raises ``GraphBreak`` with ``fullgraph``)."""


class InternalTorchDynamoError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    pass


class RecompileError(TorchDynamoException):
    pass
