# A tiny GPT (one attention block) learns to continue a short text, character by character.
import numpy as np
import dynagrad as dg
import dynagrad.nn as nn
import dynagrad.nn.functional as F
import playground

text = ('the quick brown fox jumps over the lazy dog. ' * 8 +
        'a small model learns the text it sees. ') * 2
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = dg.tensor([stoi[c] for c in text])
block, width, heads = 16, 32, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
        q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(len(chars), width)
        self.pos = nn.Embedding(block, width)
        self.block = Block()
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, len(chars))

    def forward(self, idx):
        x = self.tok(idx) + self.pos(dg.arange(idx.shape[1]))
        return self.head(self.ln(self.block(x)))


dg.manual_seed(0)
model = TinyGPT()
opt = dg.optim.AdamW(model.parameters(), lr=3e-3)
steps = 120
for step in range(steps):
    starts = dg.randint(0, len(data) - block - 1, (16,))
    xb = dg.stack([data[s:s + block] for s in starts.tolist()])
    yb = dg.stack([data[s + 1:s + block + 1] for s in starts.tolist()])
    loss = F.cross_entropy(model(xb).reshape(-1, len(chars)), yb.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    playground.loss(loss.item(), step)
    if step % 20 == 0 or step == steps - 1:
        playground.progress((step + 1) / steps, f'step {step + 1}/{steps}')
        print(f'step {step:3d}  loss {loss.item():.4f}')

idx = dg.tensor([[stoi[c] for c in 'the quick']])
with dg.no_grad():
    for _ in range(40):
        logits = model(idx[:, -block:])[:, -1]
        idx = dg.cat([idx, logits.argmax(-1, keepdim=True)], 1)
print(repr(''.join(chars[i] for i in idx[0].tolist())))
