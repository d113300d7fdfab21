"""The transforms the examples use, for NumPy uint8 images."""
import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, image):
        a = np.asarray(image, dtype=np.float32) / 255.0
        a = a[None] if a.ndim == 2 else a.transpose(2, 0, 1)
        return torch.tensor(np.ascontiguousarray(a))


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def __call__(self, x):
        mean = torch.tensor(self.mean, dtype=x.dtype).reshape(-1, 1, 1)
        std = torch.tensor(self.std, dtype=x.dtype).reshape(-1, 1, 1)
        return (x - mean) / std


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)


class _SameSize:
    """Resize/CenterCrop: the synthetic images are made at the size asked for."""

    def __init__(self, size, *args, **kwargs):
        self.size = size

    def __call__(self, image):
        return image


Resize = CenterCrop = _SameSize
