"""The digits demo's CNN trained data-parallel over MPI ranks with DistributedDataParallel.

    python -m dynagrad.distributed.run -n 2 -m dynagrad.examples.ddp_digits --epochs 10
    mpirun -np 2 python -m dynagrad.examples.ddp_digits          (the same, by hand)

Each rank reads its own shard of the training set (DistributedSampler) with a per-rank
batch of ``--batch-size``, so the global batch is world size x that. Gradients are averaged
across ranks during backward, every replica takes the same Adam step, and at the end the
ranks check that their parameters are bit-identical. Rank 0 prints the progress. It needs
the ``distributed`` and ``examples`` extras.
"""
import argparse
import sys
import time

import numpy as np

import dynagrad as dg
import dynagrad.distributed as dist
import dynagrad.nn.functional as F
from dynagrad.nn.parallel import DistributedDataParallel as DDP
from dynagrad.utils.data import DataLoader, TensorDataset
from dynagrad.utils.data.distributed import DistributedSampler
from dynagrad.examples.digits import DigitsNet, accuracy, load_digits


def train(args):
    rank, world = dist.get_rank(), dist.get_world_size()
    x_train, y_train, x_test, y_test = load_digits(args.seed)
    dg.manual_seed(args.seed + 1000 * rank)  # replicas start apart: DDP broadcasts rank 0's
    model = DDP(DigitsNet())
    dg.manual_seed(args.seed + rank)  # dropout masks differ per rank, as they should
    data = TensorDataset(x_train, y_train)
    sampler = DistributedSampler(data, shuffle=True, seed=args.seed)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler)
    optimizer = dg.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = dg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    say = print if rank == 0 and not args.quiet else (lambda *a, **k: None)
    say(f'{world} ranks, {len(sampler)} samples per rank per epoch, global batch '
        f'{args.batch_size * world}')
    start = time.perf_counter()
    final = None
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        total = dg.zeros(2, dtype=dg.float64)
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += dg.tensor([loss.item() * len(labels), len(labels)], dtype=dg.float64)
        scheduler.step()
        dist.all_reduce(total)
        final = accuracy(model.module, x_test, y_test)
        say(f'epoch {epoch:2d}  loss {float(total[0] / total[1]):.4f}  '
            f'test accuracy {final:.4f}', flush=True)
    seconds = time.perf_counter() - start
    return model, final, seconds


def main(argv=None):
    dg.backend.keep_freed_memory()  # a training program's choice: reuse freed buffers
    parser = argparse.ArgumentParser(prog='python -m dynagrad.examples.ddp_digits',
                                     description=__doc__.split('\n')[0])
    parser.add_argument('--epochs', type=int, default=10, help='training epochs (default 10)')
    parser.add_argument('--batch-size', type=int, default=16,
                        help='batch size per rank (default 16)')
    parser.add_argument('--lr', type=float, default=2e-3, help='Adam learning rate')
    parser.add_argument('--seed', type=int, default=0, help='random seed (default 0)')
    parser.add_argument('--quiet', action='store_true', help='only the final line')
    args = parser.parse_args(argv)
    dist.init_process_group('mpi')
    model, final, seconds = train(args)
    rank, world = dist.get_rank(), dist.get_world_size()
    flat = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    every = [None] * world
    dist.all_gather_object(every, flat)
    same = all(np.array_equal(every[0], f) for f in every)
    comm = model.comm_seconds
    if rank == 0:
        print(f'trained {args.epochs} epochs on {world} ranks in {seconds:.1f} s; test accuracy '
              f'{final:.4f}; replicas identical: {same}; waiting for gradient all-reduces '
              f'{1e3 * comm["wait"] / max(comm["steps"], 1):.2f} ms per step')
    dist.destroy_process_group()
    if not same:
        sys.exit('the replicas diverged')
    return final


if __name__ == '__main__':
    main()
