"""MNIST and FakeData with deterministic synthetic images (no download)."""
import os

import numpy as np

_TEMPLATES = np.random.default_rng(0).random((10, 28, 28))


class _Synthetic:
    def __init__(self, n, transform=None, target_transform=None):
        self.n, self.transform, self.target_transform = n, transform, target_transform

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        if not 0 <= index < self.n:
            raise IndexError(index)
        image, target = self._make(index)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target


class MNIST(_Synthetic):
    """Ten classes, each a fixed random template blurred with per-sample noise: learnable,
    not trivially so."""

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        n = int(os.environ.get('FAKE_MNIST_TRAIN' if train else 'FAKE_MNIST_TEST',
                               2000 if train else 500))
        super().__init__(n, transform, target_transform)
        self.offset = 0 if train else 10 ** 6
        self.targets = [self._label(i) for i in range(n)]

    def _label(self, index):
        return (index * 7 + self.offset) % 10

    def _make(self, index):
        rng = np.random.default_rng(index + self.offset)
        label = self._label(index)
        image = 0.4 * _TEMPLATES[label] + 0.6 * rng.random((28, 28))
        image[image < 0.5] = 0.0
        return (image * 255).astype(np.uint8), label


class FakeData(_Synthetic):
    def __init__(self, size=None, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        size = int(os.environ.get('FAKE_DATA_SIZE', 1000)) if size is None else size
        super().__init__(size, transform, target_transform)
        self.image_size, self.num_classes = tuple(image_size), num_classes

    def _make(self, index):
        rng = np.random.default_rng(index)
        c, h, w = self.image_size
        image = (rng.random((h, w, c)) * 255).astype(np.uint8)
        return image, int(rng.integers(self.num_classes))
