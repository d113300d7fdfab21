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


def _is_pil(image):
    return hasattr(image, 'crop') and hasattr(image, 'resize')


class CenterCrop:
    """The central size x size window (of a PIL image, as torchvision; a synthetic NumPy
    image is made at the size asked for, so cropping it is cropping nothing)."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, image):
        h, w = self.size
        if _is_pil(image):
            left, top = (image.width - w) // 2, (image.height - h) // 2
            return image.crop((left, top, left + w, top + h))
        top, left = (image.shape[0] - h) // 2, (image.shape[1] - w) // 2
        return image[top:top + h, left:left + w] if top >= 0 and left >= 0 else image


class Resize:
    """A PIL image's smaller edge to ``size`` (bilinear, as torchvision's default); a
    synthetic NumPy image is made at the size asked for and passes unchanged."""

    def __init__(self, size, *args, **kwargs):
        self.size = size

    def __call__(self, image):
        if not _is_pil(image):
            return image
        from PIL import Image
        if isinstance(self.size, int):
            w, h = image.size
            short = min(w, h)
            size = (self.size * w // short, self.size * h // short)
        else:
            size = (self.size[1], self.size[0])
        return image.resize(size, Image.BILINEAR)
