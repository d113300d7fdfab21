"""A pytorch/examples-style MNIST program (written here), run unmodified on PyTorch and on
dynagrad by tests/examples/test_pytorch_programs.py. Weights and data come from NumPy with
fixed seeds, and nothing random happens after that, so both libraries print the same losses."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=2)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--save', default='')
    args = parser.parse_args()

    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device('cpu')
    torch.backends.cudnn.benchmark = True

    rng = np.random.default_rng(0)
    images = rng.random((96, 1, 14, 14)).astype(np.float32)
    labels = rng.integers(0, 10, 96)
    train = DataLoader(TensorDataset(torch.from_numpy(images), torch.from_numpy(labels)),
                       batch_size=32, shuffle=False, num_workers=args.workers)

    model = Net().to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.2, tuple(p.shape)).astype(np.float32)))
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for data, target in train:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            print(f'epoch {epoch} loss {loss.item():.6f}')
        scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(torch.from_numpy(images))
        correct = out.argmax(dim=1).eq(torch.from_numpy(labels)).sum().item()
    print(f'correct {correct}')
    if args.save:
        torch.save(model.state_dict(), args.save)


if __name__ == '__main__':
    main()
