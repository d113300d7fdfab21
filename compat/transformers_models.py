"""Tiny GPT-2, BERT and Llama from Hugging Face transformers, end to end, on torch and on
dynagrad, compared step by step.

    python -m compat.transformers_models [--python PY] [--models gpt2,bert,llama]
                                         [--steps N] [--workdir DIR] [--json OUT]

``PY`` is an interpreter with torch==2.13.0, transformers and dynagrad importable (the
compat venv of transformers or accelerate; default: this one). For each model:

1. torch builds the model from a small seeded config (two layers, width 32, vocabulary
   of 99) and saves it with ``save_pretrained``: both runs start from those files, so
   from identical weights (the hub stays offline);
2. the same worker (``--worker``) runs once under plain Python and once under
   ``python -m dynagrad.run``: ``from_pretrained`` of the initial weights, a few AdamW
   steps on the model's own loss (``labels=``), ``save_pretrained`` of the trained model,
   ``from_pretrained`` of that, the reloaded model's logits on a fixed batch and, for the
   causal models, greedy ``generate``;
3. the two runs' losses, logits and generated tokens are compared: losses to 1e-5
   relative, logits to 1e-4 absolute, tokens exactly.

Inputs come from NumPy's seeded generator, not torch's. Dropout is on (0.1, ``--dropout``)
and both runs seed torch's generator alike, so the training losses match only where
dynagrad draws the same dropout masks as torch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODELS = ('gpt2', 'bert', 'llama')
REPO = Path(__file__).resolve().parents[1]
LOSS_RTOL = 1e-5
LOGITS_ATOL = 1e-4
ENV = {'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1',
       'CUDA_VISIBLE_DEVICES': '', 'TOKENIZERS_PARALLELISM': 'false',
       'TRANSFORMERS_VERBOSITY': 'error', 'PYTHONDONTWRITEBYTECODE': '1'}


# -- the worker: runs under whichever torch the interpreter imports ---------------------------

def _config(name, drop):
    import transformers as tf
    common = dict(vocab_size=99, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    if name == 'gpt2':
        return tf.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=64, resid_pdrop=drop,
                             embd_pdrop=drop, attn_pdrop=drop, **common)
    if name == 'bert':
        return tf.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=64, max_position_embeddings=64,
                             hidden_dropout_prob=drop, attention_probs_dropout_prob=drop,
                             **common)
    return tf.LlamaConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, intermediate_size=64,
                          max_position_embeddings=64, attention_dropout=drop, **common)


def _model_class(name):
    import transformers as tf
    return {'gpt2': tf.GPT2LMHeadModel, 'bert': tf.BertForMaskedLM,
            'llama': tf.LlamaForCausalLM}[name]


def _batch(name, step):
    """A seeded batch of token ids and its labels (BERT: 15 % of positions masked)."""
    import numpy as np
    import torch
    rng = np.random.default_rng(1000 + step)
    ids = rng.integers(3, 99, size=(2, 12))
    if name != 'bert':
        return torch.tensor(ids), torch.tensor(ids)
    labels = np.full_like(ids, -100)
    masked = rng.random(ids.shape) < 0.15
    masked[:, 1] = True
    labels[masked] = ids[masked]
    ids = ids.copy()
    ids[masked] = 4      # the [MASK] id of this vocabulary
    return torch.tensor(ids), torch.tensor(labels)


def make_initial(name, folder, dropout):
    import torch
    torch.manual_seed(0)
    model = _model_class(name)(_config(name, dropout))
    model.save_pretrained(folder)


def run_model(name, initial, folder, steps):
    import torch
    out = {'steps': {}}
    t0 = time.perf_counter()
    torch.manual_seed(0)

    def stage(key, fn):
        try:
            out[key] = fn()
            out['steps'][key] = 'ok'
        except Exception as e:      # noqa: BLE001 (reported to the driver, per stage)
            import traceback
            out['steps'][key] = f'{type(e).__name__}: {str(e)[:300]}'
            out.setdefault('tracebacks', {})[key] = traceback.format_exc()[-3000:]
            raise

    try:
        model = None

        def load():
            nonlocal model
            model = _model_class(name).from_pretrained(initial)
            return sum(p.numel() for p in model.parameters())
        stage('load', load)

        def train():
            model.train()
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
            losses = []
            for step in range(steps):
                ids, labels = _batch(name, step)
                loss = model(input_ids=ids, labels=labels).loss
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(float(loss.item()))
            return losses
        stage('train', train)

        def save_reload():
            nonlocal model
            model.save_pretrained(folder)
            model = _model_class(name).from_pretrained(folder)
            model.eval()
            ids, _ = _batch(name, 99)
            with torch.no_grad():
                return model(input_ids=ids).logits.reshape(-1).tolist()
        stage('reload_logits', save_reload)

        if name != 'bert':
            def generate():
                ids, _ = _batch(name, 123)
                with torch.no_grad():
                    tokens = model.generate(ids[:, :5], max_new_tokens=10, do_sample=False,
                                            attention_mask=torch.ones_like(ids[:, :5]))
                return tokens.tolist()
            stage('generate', generate)
    except Exception:       # noqa: BLE001 (the stage that failed is recorded)
        pass
    out['seconds'] = time.perf_counter() - t0
    return out


def worker(args):
    results = {}
    for name in args.models.split(','):
        if args.make_initial:
            make_initial(name, Path(args.workdir) / 'initial' / name, args.dropout)
        else:
            results[name] = run_model(name, Path(args.workdir) / 'initial' / name,
                                      Path(args.workdir) / args.side / name, args.steps)
    if not args.make_initial:
        Path(args.json).write_text(json.dumps(results))


# -- the driver --------------------------------------------------------------------------------

def _run(python, side, args, workdir, extra=()):
    cmd = [python]
    if side == 'dynagrad':
        cmd += ['-m', 'dynagrad.run']
    cmd += ['-m', 'compat.transformers_models', '--worker', '--side', side, '--models',
            args.models, '--steps', str(args.steps), '--dropout', str(args.dropout), '--workdir', str(workdir),
            '--json', str(workdir / f'{side}.json'), *extra]
    env = {**os.environ, **ENV}
    env['PYTHONPATH'] = os.pathsep.join([str(REPO / 'src'), str(REPO)])
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f'{side} run failed (exit {proc.returncode})')
    return wall


def compare(torch_res, dyn_res):
    """Per model: which stages match and by how much."""
    report = {}
    for name, ref in torch_res.items():
        got = dyn_res.get(name, {})
        row = {'stages': got.get('steps', {}), 'torch_stages': ref.get('steps', {})}
        if 'train' in ref and 'train' in got:
            rel = [abs(a - b) / abs(a) for a, b in zip(ref['train'], got['train'])]
            row['losses_torch'] = ref['train']
            row['losses_dynagrad'] = got['train']
            row['max_loss_rel_diff'] = max(rel)
            row['train_match'] = max(rel) <= LOSS_RTOL
        if 'reload_logits' in ref and 'reload_logits' in got:
            diff = max(abs(a - b) for a, b in zip(ref['reload_logits'], got['reload_logits']))
            row['max_logits_abs_diff'] = diff
            row['logits_match'] = diff <= LOGITS_ATOL
        if 'generate' in ref and 'generate' in got:
            row['tokens_match'] = ref['generate'] == got['generate']
            row['tokens'] = got['generate']
        row['seconds_torch'] = ref.get('seconds')
        row['seconds_dynagrad'] = got.get('seconds')
        for key in ('tracebacks',):
            if key in got:
                row['dynagrad_tracebacks'] = got[key]
        report[name] = row
    return report


def _versions(python):
    code = 'import transformers, torch; print(transformers.__version__, torch.__version__)'
    out = subprocess.run([python, '-c', code], capture_output=True, text=True, env={
        **os.environ, **ENV}).stdout.split()
    return out if len(out) == 2 else ['?', '?']


def doc_section(result, versions, steps, dropout):
    """The section of docs/compat.md that reports this run (kept when the table is
    regenerated)."""
    from .report import KEPT_BEGIN, KEPT_END
    lines = [KEPT_BEGIN, f'## transformers {versions[0]}: tiny GPT-2, BERT and Llama end to '
             'end', '',
             f'`python -m compat.transformers_models` builds each model from a small seeded '
             f'config (2 layers, width 32, vocabulary 99, dropout {dropout}) on torch '
             f'{versions[1]}, saves it, and runs the same script once on torch and once on '
             f'dynagrad from those weights: `from_pretrained` (which builds the model on the '
             f"'meta' device), {steps} AdamW steps on the model's own loss (`labels=`), "
             '`save_pretrained`, `from_pretrained` of the trained model, its logits, and greedy '
             '`generate` (10 tokens) for the causal models.', '',
             '| model | stages passed on dynagrad | max relative loss difference | max logits '
             'difference after reload | generated tokens | time torch | time dynagrad |',
             '|---|---|---:|---:|---|---:|---:|']
    for name, row in result.items():
        if name.startswith('_'):
            continue
        stages = ', '.join(k for k, v in row['stages'].items() if v == 'ok') or 'none'
        failed = [f'{k}: {v}' for k, v in row['stages'].items() if v != 'ok']
        if failed:
            stages += ' (failed: ' + '; '.join(failed)[:120] + ')'
        tokens = ('identical' if row.get('tokens_match') else 'differ') \
            if 'tokens_match' in row else '-'
        loss = row.get('max_loss_rel_diff')
        logits = row.get('max_logits_abs_diff')
        lines.append(f"| {name} | {stages} | {'-' if loss is None else f'{loss:.1e}'} | "
                     f"{'-' if logits is None else f'{logits:.1e}'} | {tokens} | "
                     f"{row.get('seconds_torch') or 0:.1f} s | "
                     f"{row.get('seconds_dynagrad') or 0:.1f} s |")
    lines += ['', f'Losses are compared to {LOSS_RTOL:g} relative, logits to {LOGITS_ATOL:g} '
              'absolute, tokens exactly. Times are those of the steps after import (the first '
              "model's include the lazy imports both libraries make on first use), on the "
              'machine of the table above.', KEPT_END]
    return '\n'.join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--python', default=sys.executable)
    p.add_argument('--models', default=','.join(MODELS))
    p.add_argument('--steps', type=int, default=5)
    p.add_argument('--dropout', type=float, default=0.1,
                   help='dropout of every layer: the runs must draw the same masks')
    p.add_argument('--workdir')
    p.add_argument('--json')
    p.add_argument('--doc', action='store_true',
                   help="write the result into docs/compat.md's transformers section")
    p.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--make-initial', action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--side', default='torch', help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    with tempfile.TemporaryDirectory(prefix='dynagrad-tf-') as tmp:
        workdir = Path(args.workdir or tmp)
        _run(args.python, 'torch', args, workdir, ('--make-initial',))
        walls = {side: _run(args.python, side, args, workdir) for side in ('torch', 'dynagrad')}
        result = compare(json.loads((workdir / 'torch.json').read_text()),
                         json.loads((workdir / 'dynagrad.json').read_text()))
    result['_wall_seconds'] = walls
    text = json.dumps(result, indent=1)
    if args.json:
        Path(args.json).write_text(text)
    for name, row in result.items():
        if name.startswith('_'):
            continue
        print(f'{name}: stages {row["stages"]}')
        if 'losses_torch' in row:
            print(f'  losses torch:    {row["losses_torch"]}')
            print(f'  losses dynagrad: {row["losses_dynagrad"]}')
        for key in ('max_loss_rel_diff', 'train_match', 'max_logits_abs_diff', 'logits_match',
                    'tokens_match'):
            if key in row:
                print(f'  {key}: {row[key]}')
        for stage, tb in row.get('dynagrad_tracebacks', {}).items():
            print(f'  --- dynagrad {stage} ---\n{tb}')
    print('wall seconds:', walls)
    if args.doc:
        from .report import with_kept
        doc = REPO / 'docs' / 'compat.md'
        section = doc_section(result, _versions(args.python), args.steps, args.dropout)
        doc.write_text(with_kept(doc.read_text(), section))
        print(f'wrote {doc}')
    ok = all(row.get('train_match') and row.get('logits_match')
             and row.get('tokens_match', True) for n, row in result.items()
             if not n.startswith('_'))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
