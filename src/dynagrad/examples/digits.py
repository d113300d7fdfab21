"""The main demo: a small convolutional network learns scikit-learn's handwritten digits.

    python -m dynagrad.examples.digits --help

It trains with a progress bar per epoch, prints the test accuracy, saves a checkpoint and
reloads it into a fresh model (the accuracy must not change), and plots the loss and
accuracy curves to a PNG. It also draws the backward graph of one training step as SVG
when graphviz is installed. Everything it writes goes to ``--out``. It needs the
``examples`` extra: ``pip install -e '.[examples]'``.
"""
import argparse
import os
import sys
import time

import numpy as np

import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F


def _need(module, extra='examples'):
    try:
        return __import__(module)
    except ImportError:
        sys.exit(f'this demo needs {module!r}: pip install -e ".[{extra}]"')


class DigitsNet(nn.Module):
    """Two padded 3x3 convolutions (1->16->32), ReLU, 2x2 max-pool, dropout, linear to 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x.flatten(1))
        return self.fc(x)


def load_digits(seed):
    """scikit-learn's 1,797 8x8 digits, scaled to [0, 1], split 80/20 with a fixed seed."""
    datasets = _need('sklearn.datasets').datasets
    digits = datasets.load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    n_test = len(labels) // 5
    test, train = order[:n_test], order[n_test:]
    return (dg.tensor(images[train]), dg.tensor(labels[train]),
            dg.tensor(images[test]), dg.tensor(labels[test]))


@dg.no_grad()
def accuracy(model, images, labels):
    model.eval()
    predictions = model(images).argmax(1)
    model.train()
    return (predictions == labels).float().mean().item()


def train(args):
    tqdm = _need('tqdm').tqdm
    dg.manual_seed(args.seed)
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    loader = dg.utils.data.DataLoader(dg.utils.data.TensorDataset(x_train, y_train),
                                      batch_size=args.batch_size, shuffle=True)
    model = DigitsNet()
    optimizer = dg.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = dg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    history = {'loss': [], 'accuracy': []}
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        total, batches = 0.0, 0
        bar = tqdm(loader, desc=f'epoch {epoch}/{args.epochs}', leave=False,
                   disable=args.quiet)
        for images, labels in bar:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
            bar.set_postfix(loss=f'{loss.item():.3f}')
        scheduler.step()
        history['loss'].append(total / batches)
        history['accuracy'].append(accuracy(model, x_test, y_test))
        print(f'epoch {epoch:2d}  loss {history["loss"][-1]:.4f}  '
              f'test accuracy {history["accuracy"][-1]:.4f}')
    seconds = time.perf_counter() - start
    return model, history, (x_test, y_test), seconds


def plot(history, path):
    matplotlib = _need('matplotlib')
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401
    epochs = range(1, len(history['loss']) + 1)
    fig, ax1 = plt.subplots(figsize=(6, 4))
    ax1.plot(epochs, history['loss'], 'o-', color='tab:blue', label='training loss')
    ax1.set_xlabel('epoch')
    ax1.set_ylabel('training loss', color='tab:blue')
    ax2 = ax1.twinx()
    ax2.plot(epochs, history['accuracy'], 's-', color='tab:orange', label='test accuracy')
    ax2.set_ylabel('test accuracy', color='tab:orange')
    ax1.set_title('dynagrad: a CNN on the digits data set')
    ax1.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_graph(model, images, labels, path):
    """Draw the backward graph of one training step (the loss on one batch) as SVG.

    Returns the line to print: where the picture went, or why it was skipped (the
    graphviz Python package or the system's ``dot`` program missing).
    """
    from dynagrad.viz import MISSING_DOT, make_dot
    loss = F.cross_entropy(model(images), labels)
    try:
        dot = make_dot(loss, params=dict(model.named_parameters()))
        svg = dot.pipe(format='svg')
    except ImportError:
        return 'graph of one training step skipped: pip install -e ".[viz]" to draw it'
    except RuntimeError as e:
        if str(e) != MISSING_DOT:
            raise
        return ("graph of one training step skipped: the 'dot' program is missing "
                "(apt-get install graphviz / brew install graphviz)")
    with open(path, 'wb') as f:
        f.write(svg)
    return f'backward graph of one training step: {path}'


def main(argv=None):
    dg.backend.keep_freed_memory()  # a training program's choice: reuse freed buffers
    parser = argparse.ArgumentParser(prog='python -m dynagrad.examples.digits',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--epochs', type=int, default=20, help='training epochs (default 20)')
    parser.add_argument('--batch-size', type=int, default=32, help='batch size (default 32)')
    parser.add_argument('--lr', type=float, default=2e-3, help='Adam learning rate (default 2e-3)')
    parser.add_argument('--seed', type=int, default=0, help='random seed (default 0)')
    parser.add_argument('--out', default='digits-output',
                        help='folder for the checkpoint and the plot (default ./digits-output)')
    parser.add_argument('--quiet', action='store_true', help='no progress bars')
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    model, history, (x_test, y_test), seconds = train(args)
    final = history['accuracy'][-1]
    print(f'trained {args.epochs} epochs in {seconds:.1f} s; test accuracy {final:.4f}')

    checkpoint = os.path.join(args.out, 'digits.pt')
    dg.save(model.state_dict(), checkpoint)
    reloaded = DigitsNet()
    reloaded.load_state_dict(dg.load(checkpoint))
    again = accuracy(reloaded, x_test, y_test)
    print(f'checkpoint saved to {checkpoint} and reloaded: test accuracy {again:.4f}')
    if again != final:
        sys.exit('the reloaded model does not reproduce the accuracy')

    figure = os.path.join(args.out, 'digits-training.png')
    plot(history, figure)
    print(f'loss and accuracy curves: {figure}')

    model.train()
    print(write_graph(model, x_test[:args.batch_size], y_test[:args.batch_size],
                      os.path.join(args.out, 'digits-graph.svg')))
    return final


if __name__ == '__main__':
    main()
