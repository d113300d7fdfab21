"""A pytorch/examples word_language_model-style program (written here): LSTM or Transformer
language model, truncated BPTT with detached hidden state, clip_grad_norm_, a hand-written SGD
update, the whole model saved with torch.save and loaded back under safe_globals. Weights and
data come from NumPy, dropout is 0, so PyTorch and dynagrad print the same losses."""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, kind, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.kind = kind
        self.encoder = nn.Embedding(ntoken, ninp)
        if kind == 'LSTM':
            self.rnn = nn.LSTM(ninp, nhid, nlayers)
        else:
            layer = nn.TransformerEncoderLayer(ninp, 2, nhid, dropout=0.0)
            self.rnn = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.decoder = nn.Linear(nhid if kind == 'LSTM' else ninp, ntoken)

    def forward(self, input, hidden=None):
        emb = self.encoder(input)
        if self.kind == 'LSTM':
            output, hidden = self.rnn(emb, hidden)
        else:
            mask = nn.Transformer.generate_square_subsequent_mask(len(input))
            output = self.rnn(emb, mask=mask, is_causal=True)
        return self.decoder(output), hidden


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', default='LSTM')
    parser.add_argument('--save', default='model.pt')
    args = parser.parse_args()
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    rng = np.random.default_rng(1)
    ntoken, bsz, bptt = 30, 4, 6
    data = torch.from_numpy(rng.integers(0, ntoken, (40, bsz))).to(device)
    model = RNNModel(args.model, ntoken, 16, 16, 2).to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, tuple(p.shape)).astype(np.float32)))
    criterion = nn.CrossEntropyLoss()
    lr = 2.0
    for epoch in range(2):
        model.train()
        hidden = None
        for i in range(0, data.size(0) - 1, bptt):
            seq_len = min(bptt, len(data) - 1 - i)
            x, y = data[i:i + seq_len], data[i + 1:i + 1 + seq_len].reshape(-1)
            if hidden is not None:
                hidden = repackage_hidden(hidden)
            model.zero_grad()
            output, hidden = model(x, hidden)
            loss = criterion(output.view(-1, ntoken), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            print(f'epoch {epoch} loss {loss.item():.6f} ppl {math.exp(loss.item()):.4f}')
    with open(args.save, 'wb') as f:
        torch.save(model, f)
    with open(args.save, 'rb') as f:
        with torch.serialization.safe_globals([RNNModel]):
            model = torch.load(f, weights_only=False)
    model.eval()
    with torch.no_grad():
        output, _ = model(data[:-1])
        print(f'reloaded loss {criterion(output.view(-1, ntoken), data[1:].reshape(-1)).item():.6f}')


if __name__ == '__main__':
    main()
