"""The forms of nn.functional ops that PyTorch also has at top level (``torch.softmax``,
``torch.conv2d``, ``torch.dropout``, ...), with the top-level signatures."""

__all__ = []
