"""A stand-in for ``requests`` that serves a synthetic Cora in place of the download gcn and
gat make (https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz), and refuses anything else.

The graph is Cora-like: FAKE_CORA_NODES papers (2,708 unless set), 1,433 binary word
features, seven classes, about two citations per paper. Each class has its own topic
words, and most citations link papers of one class, so both the features and the graph
carry the label, neither completely: a GCN learns it well, not perfectly.
"""
import io
import os
import tarfile

import numpy as np

CORA_URL = 'https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz'
CLASSES = ['Case_Based', 'Genetic_Algorithms', 'Neural_Networks', 'Probabilistic_Methods',
           'Reinforcement_Learning', 'Rule_Learning', 'Theory']


def synthetic_cora(nodes=None, words=1433, seed=0):
    """(cora.content, cora.cites) as the texts of the real files."""
    n = int(nodes or os.environ.get('FAKE_CORA_NODES', '2708'))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), n)
    topics = rng.permutation(words)[:len(CLASSES) * 60].reshape(len(CLASSES), 60)
    features = np.zeros((n, words), np.int8)
    for i in range(n):
        own = rng.choice(topics[labels[i]], size=rng.integers(3, 9), replace=False)
        noise = rng.integers(0, words, size=rng.integers(6, 14))
        features[i, own] = 1
        features[i, noise] = 1
    ids = rng.choice(np.arange(30, 1_200_000), size=n, replace=False)
    by_class = [np.flatnonzero(labels == c) for c in range(len(CLASSES))]
    edges = []
    for _ in range(int(n * 2.0)):
        a = int(rng.integers(0, n))
        if rng.random() < 0.75:
            b = int(rng.choice(by_class[labels[a]]))
        else:
            b = int(rng.integers(0, n))
        if a != b:
            edges.append((ids[b], ids[a]))      # cited, citing
    content = '\n'.join(f'{ids[i]}\t' + '\t'.join(map(str, features[i].tolist())) +
                        f'\t{CLASSES[labels[i]]}' for i in range(n)) + '\n'
    cites = '\n'.join(f'{a}\t{b}' for a, b in edges) + '\n'
    return content, cites


def _tgz():
    content, cites = synthetic_cora()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w:gz') as tar:
        for name, text in (('cora/cora.content', content), ('cora/cora.cites', cites)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


class Response:
    def __init__(self, raw):
        self.raw = raw
        self.status_code = 200
        self.content = raw.getvalue()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def raise_for_status(self):
        pass


def get(url, *args, **kwargs):
    if url != CORA_URL:
        raise ConnectionError(f'the benchmarks stand-in for requests serves only {CORA_URL}, '
                              f'not {url}')
    return Response(_tgz())
