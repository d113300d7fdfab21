"""Run pytorch/examples programs unmodified on PyTorch and on dynagrad; compare final losses.

    python -m benchmarks.pytorch_examples --examples /path/to/pytorch/examples [names...]

Needs a copy of https://github.com/pytorch/examples (or PYTORCH_EXAMPLES=/path) and torch
installed (the test extra); without a copy it says so and exits 0 having checked nothing.

Each example runs in a scratch copy of its folder, with small sizes through its own options
and synthetic data in place of downloads (stand-ins for ``torchvision`` and ``requests`` in
this folder, used by both libraries). PyTorch runs it SEEDS times with its seed shifted (seeded.py) to measure its
own run-to-run spread; dynagrad runs it once through ``python -m dynagrad.run``. dynagrad
passes when its final figure lies within PyTorch's range widened by that spread (and by 2%
of the value, so that a nearly deterministic program is not held to zero).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEEDS = 3


def _wlm_corpus(folder):
    """A small synthetic corpus with structure (a Markov chain over 200 words)."""
    import numpy as np
    rng = np.random.default_rng(0)
    words = [f'w{i}' for i in range(200)]
    nxt = rng.integers(0, 200, size=(200, 3))
    os.makedirs(folder, exist_ok=True)
    for name, n_lines in (('train.txt', 600), ('valid.txt', 80), ('test.txt', 80)):
        w, lines = 0, []
        for _ in range(n_lines):
            line = []
            for _ in range(12):
                w = int(nxt[w, rng.integers(0, 3)])
                line.append(words[w])
            lines.append(' '.join(line))
        Path(folder, name).write_text('\n'.join(lines) + '\n')


def _wlm(model):
    return dict(folder='word_language_model', script='main.py',
                setup=lambda d: _wlm_corpus(os.path.join(d, 'synthetic')),
                args=['--data', 'synthetic', '--model', model, '--epochs', '2', '--emsize', '32',
                      '--nhid', '32', '--bptt', '20', '--batch_size', '10', '--save', 'model.pt'],
                metric=r'End of training \| test loss\s+([\d.]+)')


def _bsds_images(folder, train=16, test=4, size=256):
    """Synthetic stand-ins for BSDS300's photographs, where super_resolution's data.py looks
    for them (so it downloads nothing): smooth colour fields with a few discs and stripes,
    structure a 3x upscaler can learn, saved as PNG."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size] / size
    for split, count in (('train', train), ('test', test)):
        out = os.path.join(folder, 'dataset', 'BSDS300', 'images', split)
        os.makedirs(out, exist_ok=True)
        for i in range(count):
            channels = []
            for _ in range(3):
                a, b, c = rng.uniform(-1, 1, 3)
                f = rng.uniform(2, 12)
                img = 0.5 + 0.25 * np.sin(f * (a * xx + b * yy) + c)
                for _ in range(4):
                    cy, cx, r = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9), rng.uniform(.05, .2)
                    img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = rng.uniform(0, 1)
                channels.append(img)
            rgb = (np.clip(np.stack(channels, -1), 0, 1) * 255).astype(np.uint8)
            Image.fromarray(rgb).save(os.path.join(out, f'{split}{i}.png'))


EXAMPLES = {
    'regression': dict(folder='regression', script='main.py', args=[],
                       metric=r'Loss: ([\d.]+) after', converge_below=1e-3),
    'time_sequence_prediction': dict(
        folder='time_sequence_prediction', script='train.py', args=['--steps', '2'],
        setup_script='generate_sine_wave.py', metric=r'test loss: ([\d.e+-]+)',
        # it saves a NumPy array and loads it with torch.load's default, which PyTorch 2.6+
        # refuses (weights_only=True): PyTorch itself needs its documented switch to run it
        env={'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD': '1'}),
    'word_language_model_lstm': _wlm('LSTM'),
    'word_language_model_gru': _wlm('GRU'),
    'word_language_model_transformer': _wlm('Transformer'),
    'mnist': dict(folder='mnist', script='main.py', args=['--epochs', '1'],
                  env={'FAKE_MNIST_TRAIN': '1200', 'FAKE_MNIST_TEST': '400'},
                  metric=r'Test set: Average loss: ([\d.]+)'),
    'vae': dict(folder='vae', script='main.py', args=['--epochs', '1'],
                env={'FAKE_MNIST_TRAIN': '1200', 'FAKE_MNIST_TEST': '400'},
                metric=r'Test set loss: ([\d.]+)'),
    'mnist_forward_forward': dict(
        folder='mnist_forward_forward', script='main.py',
        args=['--epochs', '40', '--train_size', '500', '--test_size', '200'],
        env={'FAKE_MNIST_TRAIN': '500', 'FAKE_MNIST_TEST': '200'},
        metric=r'test error: ([\d.]+)'),
    'mnist_rnn': dict(folder='mnist_rnn', script='main.py', args=['--epochs', '1'],
                      env={'FAKE_MNIST_TRAIN': '1200', 'FAKE_MNIST_TEST': '400'},
                      metric=r'Test set: Average loss: ([\d.]+)'),
    'mnist_hogwild': dict(folder='mnist_hogwild', script='main.py',
                          args=['--epochs', '1', '--num-processes', '2'],
                          env={'FAKE_MNIST_TRAIN': '1200', 'FAKE_MNIST_TEST': '400'},
                          metric=r'Test set: Average loss: ([\d.]+)'),
    'super_resolution': dict(
        folder='super_resolution', script='main.py', setup=_bsds_images,
        args=['--upscale_factor', '3', '--batchSize', '4', '--testBatchSize', '4',
              '--nEpochs', '2', '--lr', '0.001', '--threads', '0'],
        metric=r'Avg\. PSNR: ([\d.]+) dB'),
    # Cora comes from the stand-in ``requests`` in this folder (a synthetic Cora-like graph)
    'gcn': dict(folder='gcn', script='main.py', args=['--epochs', '200'],
                metric=r'Test set results: loss [\d.]+ accuracy ([\d.]+)'),
    # gat's attention is dense (heads x nodes x nodes): a smaller graph and model keep it
    # to seconds per run (its split needs over 1,600 nodes)
    'gat': dict(folder='gat', script='main.py',
                args=['--epochs', '25', '--num-heads', '2', '--hidden-dim', '16'],
                env={'FAKE_CORA_NODES': '1800'},
                metric=r'Test set results: loss [\d.]+ accuracy ([\d.]+)'),
    'dcgan': dict(folder='dcgan', script='main.py',
                  args=['--dataset', 'fake', '--niter', '1', '--batchSize', '32'],
                  env={'FAKE_DATA_SIZE': '128'}, metric=r'Loss_D: ([\d.]+)'),
}


def _run(example, lib, workdir, offset, timeout):
    env = dict(os.environ, EXAMPLE_SEED_OFFSET=str(offset), PYTHONUNBUFFERED='1',
               MPLBACKEND='Agg', **example.get('env', {}))
    env['PYTHONPATH'] = os.pathsep.join([str(HERE)] + [p for p in env.get(
        'PYTHONPATH', '').split(os.pathsep) if p])
    runner = [sys.executable] + (['-m', 'dynagrad.run'] if lib == 'dynagrad' else [])
    if example.get('setup_script'):
        subprocess.run(runner + [example['setup_script']], cwd=workdir, env=env, check=True,
                       capture_output=True, timeout=timeout)
    start = time.perf_counter()
    out = subprocess.run(runner + [str(HERE / 'seeded.py'), example['script']]
                         + example['args'], cwd=workdir, env=env, capture_output=True,
                         text=True, timeout=timeout)
    seconds = time.perf_counter() - start
    found = re.findall(example['metric'], out.stdout)
    if out.returncode != 0 or not found:
        tail = (out.stdout + out.stderr).strip().splitlines()[-12:]
        return None, seconds, '\n'.join(tail)
    return float(found[-1]), seconds, ''


def check(name, example, root, timeout):
    results = {}
    for lib, offsets in (('torch', range(SEEDS)), ('dynagrad', (0,))):
        for offset in offsets:
            with tempfile.TemporaryDirectory(prefix=f'ex-{name}-') as tmp:
                workdir = os.path.join(tmp, example['folder'])
                shutil.copytree(os.path.join(root, example['folder']), workdir)
                if example.get('setup'):
                    example['setup'](workdir)
                value, seconds, error = _run(example, lib, workdir, offset, timeout)
            results.setdefault(lib, []).append((value, seconds, error))
    torch_values = [v for v, _, _ in results['torch'] if v is not None]
    value, seconds, error = results['dynagrad'][0]
    if not torch_values:
        return dict(ok=False, why='PyTorch itself did not finish:\n' + results['torch'][0][2])
    if value is None:
        return dict(ok=False, why='dynagrad did not finish:\n' + error, torch=torch_values)
    if 'converge_below' in example:
        ok = value < example['converge_below']
    else:
        lo, hi = min(torch_values), max(torch_values)
        slack = (hi - lo) + 0.02 * abs(sum(torch_values) / len(torch_values))
        ok = lo - slack <= value <= hi + slack
    return dict(ok=ok, torch=torch_values, dynagrad=value,
                torch_s=sum(s for _, s, _ in results['torch']) / SEEDS, dynagrad_s=seconds)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m benchmarks.pytorch_examples')
    parser.add_argument('--examples', default=os.environ.get('PYTORCH_EXAMPLES'),
                        help='a copy of github.com/pytorch/examples')
    parser.add_argument('--timeout', type=int, default=900)
    parser.add_argument('names', nargs='*', help=f'a subset of: {", ".join(EXAMPLES)}')
    args = parser.parse_args(argv)
    if not args.examples or not os.path.isdir(args.examples):
        print('No copy of pytorch/examples: pass --examples PATH or set PYTORCH_EXAMPLES '
              '(git clone https://github.com/pytorch/examples). Nothing was checked.')
        return 0
    names = args.names or list(EXAMPLES)
    unknown = [n for n in names if n not in EXAMPLES]
    if unknown:
        parser.error(f'unknown example(s) {unknown}; choose from {list(EXAMPLES)}')
    failed = []
    print('| example | PyTorch (3 seeds) | dynagrad | s PyTorch | s dynagrad | ok |')
    print('|---|---|--:|--:|--:|---|')
    for name in names:
        r = check(name, EXAMPLES[name], args.examples, args.timeout)
        if 'dynagrad' in r:
            t = ', '.join(f'{v:.4g}' for v in r['torch'])
            print(f"| {name} | {t} | {r['dynagrad']:.4g} | {r['torch_s']:.1f} | "
                  f"{r['dynagrad_s']:.1f} | {'yes' if r['ok'] else 'NO'} |", flush=True)
        else:
            print(f'| {name} | — | — | — | — | NO |', flush=True)
            print('  ' + r['why'].replace('\n', '\n  '), flush=True)
        if not r['ok']:
            failed.append(name)
    if failed:
        print(f'failed: {", ".join(failed)}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
