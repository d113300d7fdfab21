"""A stand-in for the parts of torchvision that pytorch/examples use, on synthetic data.

It imports ``torch`` like any user code, so the same file serves a run on PyTorch and a run
on dynagrad (``python -m dynagrad.run``). Images are NumPy uint8 arrays (H, W) or (H, W, C),
which ``transforms.ToTensor`` turns into float tensors (C, H, W) in [0, 1], as torchvision
does for PIL images. Sizes come from environment variables so the runner keeps runs small:
FAKE_MNIST_TRAIN, FAKE_MNIST_TEST, FAKE_DATA_SIZE.
"""
from . import datasets, transforms, utils  # noqa: F401

__version__ = '0.0-synthetic'
