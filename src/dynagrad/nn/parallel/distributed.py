"""``DistributedDataParallel``: every rank trains a replica on its shard of the batch and
the gradients are averaged across ranks during backward, in flattened buckets.

How it works (see docs/distributed.md):

* At construction the parameters and buffers of rank 0 are broadcast to every rank (after
  checking that every rank has the same names, shapes and dtypes), so replicas start equal.
* The parameters that require grad are packed, in reverse registration order (roughly the
  order backward produces their gradients), into buckets of about ``bucket_cap_mb`` MB,
  one dtype per bucket.
* A post-hook on each parameter's ``AccumulateGrad`` node (held strongly here, so the hook
  stays) copies the freshly accumulated ``.grad`` into its bucket. When a bucket is full it
  is summed across ranks by a non-blocking ``MPI_Iallreduce``, launched strictly in bucket
  order (MPI needs every rank to start collectives in the same order), while backward goes
  on computing the gradients of the layers below.
* The end of backward: the hook of the last parameter to become ready waits for every
  outstanding all-reduce, divides by the world size and writes the averages back into each
  ``.grad`` in place. So when ``loss.backward()`` returns, gradients are averaged and
  ``optimizer.step()`` may follow, as with PyTorch.
* If a backward stops before every parameter got its gradient (parameters not used to
  compute the loss), the next forward raises PyTorch's "Expected to have finished
  reduction in the prior iteration" error, unless ``find_unused_parameters=True``: then
  forward walks the output's graph, marks the parameters it cannot reach as ready at once
  (contributing their current ``.grad`` or zeros), and a parameter unused on every rank
  keeps its ``.grad`` untouched.

Parameters on the 'cuda' device work through host buffers: the buckets are NumPy arrays,
each gradient is copied to the host as it becomes ready, the all-reduce runs on the host
and the averages are copied back into the gradients' device arrays. CUDA-aware MPI is not
used. (The copies are per parameter; CPU training makes no copy it did not make before.)

``state_dict()`` returns the wrapped module's keys, without PyTorch's ``module.`` prefix,
so checkpoints move between the wrapped and the plain model; ``load_state_dict`` takes
either form. ``named_parameters()`` keeps the ``module.`` prefix, as PyTorch's does.
"""
import time
from contextlib import contextmanager

import numpy as np

from ..module import Module
from ...autograd.grad_mode import state as _grad_state
from ..._device import backend_of
from ...backend import xp
from ...distributed.host_buffers import copy_into, on_device, to_host
from ...distributed.process_group import communicator, is_initialized, load_mpi
from ...distributed.work import Work, completed_work
from ...tensor import Tensor, bump_version, wrap

__all__ = ['DistributedDataParallel']

UNFINISHED = (
    'Expected to have finished reduction in the prior iteration before starting a new one. '
    'This error indicates that your module has parameters that were not used in producing '
    'loss. You can enable unused parameter detection by passing the keyword argument '
    '`find_unused_parameters=True` to `dynagrad.nn.parallel.DistributedDataParallel`, and by '
    'making sure all `forward` function outputs participate in calculating loss. Parameters '
    'that did not receive a gradient on rank {rank}: {names}')


class _Bucket:
    __slots__ = ('index', 'params', 'offsets', 'flat', 'pending', 'work')

    def __init__(self, index, params, dtype):
        self.index = index
        self.params = params
        sizes = [p._data.size for p in params]
        self.offsets = xp.concatenate([[0], xp.cumsum(sizes)]).astype(np.int64)
        wire = np.float32 if dtype == np.float16 else dtype
        self.flat = xp.zeros(int(self.offsets[-1]), wire)
        self.pending = len(params)
        self.work = None


class DistributedDataParallel(Module):
    """Data parallelism across MPI ranks: wrap the model, then train as usual.

    ``init_process_group()`` must have been called. Each rank should see a different shard
    of the data (``DistributedSampler``); the averaged gradients make every replica take the
    same optimizer step.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not is_initialized():
            raise RuntimeError('DistributedDataParallel needs the process group: call '
                               'dynagrad.distributed.init_process_group() first')
        if not isinstance(module, Module):
            raise TypeError(f'DistributedDataParallel wraps a dynagrad.nn.Module, got '
                            f'{type(module).__name__}')
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.require_backward_grad_sync = True
        self.dim = dim
        comm = communicator(process_group)
        object.__setattr__(self, '_comm', comm)
        self._world = comm.Get_size()
        self._rank = comm.Get_rank()

        named = [(n, p) for n, p in module.named_parameters()]
        self._param_names = {id(p): n for n, p in named}
        self._check_same_model(comm, module)
        self._sync_module_states(comm, module)

        params = [p for _, p in named if p.requires_grad]
        if not params:
            raise RuntimeError('DistributedDataParallel is not needed when a module has no '
                               'parameter that requires a gradient')
        self._params = params
        self._buckets, self._where = self._make_buckets(params)
        # Strong references: a leaf only caches its AccumulateGrad weakly, and the hook
        # lives on that node.
        self._grad_accs = []
        self._hook_handles = []
        for i, p in enumerate(params):
            acc = p._grad_accumulator()
            self._grad_accs.append(acc)
            self._hook_handles.append(acc.register_hook(self._make_hook(i)))
        self._armed = self._fired = False
        self._ready = xp.zeros(len(params), bool)
        self._used = xp.ones(len(params), bool)
        self._next_bucket = 0
        self._bucket_pending = [b.pending for b in self._buckets]
        # Seconds spent launching all-reduces and waiting for them, per backward (last one)
        # and in total: what docs/distributed.md reports as communication time.
        self.comm_seconds = {'launch': 0.0, 'wait': 0.0, 'steps': 0}

    # -- construction ----------------------------------------------------------------
    def _check_same_model(self, comm, module):
        mine = [(n, tuple(t.shape), str(t.dtype))
                for n, t in list(module.named_parameters()) + list(module.named_buffers())]
        every = comm.allgather(mine)
        for r, theirs in enumerate(every):
            if theirs != every[0]:
                diff = [f'{a} vs {b}' for a, b in zip(every[0], theirs) if a != b][:3]
                if len(theirs) != len(every[0]):
                    diff.append(f'{len(every[0])} vs {len(theirs)} tensors')
                raise RuntimeError(
                    f'DistributedDataParallel: the model on rank {r} differs from rank 0 '
                    f'(name, shape, dtype; rank 0 first): {"; ".join(diff)}. Every rank must '
                    'build the same model.')

    def _sync_module_states(self, comm, module):
        tensors = list(module.parameters()) + [b for b in module.buffers() if b is not None]
        self._broadcast_flat(comm, tensors)

    def _broadcast_flat(self, comm, tensors):
        """Broadcast from rank 0, one packed buffer per dtype."""
        if self._world == 1 or not tensors:
            return
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, group in by_dtype.items():
            # device tensors are packed from host copies and written back in place
            flat = xp.concatenate([xp.ravel(to_host(t._data)) for t in group])
            comm.Bcast(flat, root=0)
            pos = 0
            for t in group:
                n = t._data.size
                if on_device(t._data):
                    copy_into(t._data, flat[pos:pos + n])
                else:
                    t._data[...] = flat[pos:pos + n].reshape(t._data.shape)
                bump_version(t, 'DistributedDataParallel (rank 0\'s state broadcast)')
                pos += n

    def _make_buckets(self, params):
        cap = max(1, int(self.bucket_cap_mb * 1024 * 1024))
        buckets, where = [], {}
        current, size, dtype = [], 0, None
        for i in reversed(range(len(params))):
            p = params[i]
            nbytes = p._data.nbytes
            if current and (p._data.dtype != dtype or size + nbytes > cap):
                buckets.append(current)
                current, size = [], 0
            current.append(i)
            size += nbytes
            dtype = p._data.dtype
        if current:
            buckets.append(current)
        out = []
        for b, idx in enumerate(buckets):
            bucket = _Bucket(b, [params[i] for i in idx], params[idx[0]]._data.dtype)
            out.append(bucket)
            for k, i in enumerate(idx):
                where[i] = (b, k)
        return out, where

    # -- forward -------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._armed and self._fired:
            names = [self._param_names[id(self._params[i])]
                     for i in xp.nonzero(~self._ready)[0]]
            self._armed = False
            raise RuntimeError(UNFINISHED.format(rank=self._rank, names=', '.join(names)))
        if self.broadcast_buffers and self.training:
            buffers = [b for b in self.module.buffers() if b is not None]
            self._broadcast_flat(self._comm, buffers)
        output = self.module(*inputs, **kwargs)
        if self.require_backward_grad_sync and _grad_state.grad_enabled and self.training:
            self._arm(output)
        else:
            self._armed = False
        return output

    def _arm(self, output):
        for b in self._buckets:  # a forward whose backward never ran may have launched some
            if b.work is not None:
                b.work.wait()
        self._armed = True
        self._fired = False
        self._ready[:] = False
        self._used[:] = True
        self._next_bucket = 0
        self._bucket_pending = [len(b.params) for b in self._buckets]
        for b in self._buckets:
            b.work = None
        self._launch_seconds = 0.0
        if self.find_unused_parameters:
            reachable = self._reachable_accumulators(output)
            for i, acc in enumerate(self._grad_accs):
                if id(acc) not in reachable:
                    self._used[i] = False
                    self._mark_ready(i)

    @staticmethod
    def _reachable_accumulators(output):
        roots, stack = [], [output]
        while stack:
            o = stack.pop()
            if isinstance(o, Tensor):
                if o._grad_fn is not None:
                    roots.append(o._grad_fn)
            elif isinstance(o, (list, tuple)):
                stack.extend(o)
            elif isinstance(o, dict):
                stack.extend(o.values())
        seen, found = set(), set()
        while roots:
            node = roots.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.__class__.__name__ == 'AccumulateGrad':
                found.add(id(node))
            for nxt, _ in node.next_functions:
                if nxt is not None and id(nxt) not in seen:
                    roots.append(nxt)
        return found

    # -- backward: hooks and buckets ---------------------------------------------------
    def _make_hook(self, i):
        def hook(grad_inputs, grad_outputs):
            if self._armed:
                self._fired = True
                self._mark_ready(i)
        return hook

    def _mark_ready(self, i):
        if self._ready[i]:
            return
        self._ready[i] = True
        b, k = self._where[i]
        bucket = self._buckets[b]
        p = self._params[i]
        lo, hi = bucket.offsets[k], bucket.offsets[k + 1]
        if p._grad is not None:
            # the bucket lives on the host: a device gradient is copied over here
            bucket.flat[lo:hi] = xp.ravel(to_host(p._grad._data))
        else:
            bucket.flat[lo:hi] = 0
        self._bucket_pending[b] -= 1
        start = time.perf_counter()
        # Let MPI progress the all-reduces already in flight.
        for earlier in self._buckets[:self._next_bucket]:
            if earlier.work is not None:
                earlier.work.is_completed()
        while (self._next_bucket < len(self._buckets)
               and self._bucket_pending[self._next_bucket] == 0):
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        self._launch_seconds += time.perf_counter() - start
        if self._next_bucket == len(self._buckets):
            self._finish()

    def _launch(self, bucket):
        if self._world == 1:
            bucket.work = completed_work()
        else:
            MPI = load_mpi()
            req = self._comm.Iallreduce(MPI.IN_PLACE, bucket.flat, op=MPI.SUM)
            bucket.work = Work([req], None, bucket.flat)

    def _finish(self):
        """Wait for every bucket, average, and write the gradients back."""
        start = time.perf_counter()
        for bucket in self._buckets:
            bucket.work.wait()
        globally_used = None
        if self.find_unused_parameters and self._world > 1:
            counts = self._used.astype(np.int32)
            self._comm.Allreduce(self._comm_in_place(), counts)
            globally_used = counts > 0
        wait = time.perf_counter() - start
        scale = 1.0 / self._world
        for bucket in self._buckets:
            if self._world > 1:
                bucket.flat *= scale
        for i, p in enumerate(self._params):
            if globally_used is not None:
                used = globally_used[i]
            else:
                used = self._used[i]
            if not used:
                continue
            b, k = self._where[i]
            bucket = self._buckets[b]
            values = bucket.flat[bucket.offsets[k]:bucket.offsets[k + 1]].reshape(p._data.shape)
            if p._grad is None:
                grad = values.astype(p._data.dtype)
                if on_device(p._data):      # a new gradient lives where its parameter does
                    grad = backend_of(p._data).asarray(grad)
                p.grad = wrap(grad)
            elif on_device(p._grad._data):
                copy_into(p._grad._data, values)
            else:
                xp.copyto(p._grad._data, values, casting='unsafe')
                bump_version(p._grad, 'DistributedDataParallel (averaged gradients)')
        self._armed = False
        self.comm_seconds['launch'] += self._launch_seconds
        self.comm_seconds['wait'] += wait
        self.comm_seconds['steps'] += 1

    def _comm_in_place(self):
        return load_mpi().IN_PLACE

    # -- the rest of the API --------------------------------------------------------
    @contextmanager
    def no_sync(self):
        """Backward passes in this block accumulate gradients locally, without
        communication; the first backward outside it averages the accumulated total."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def state_dict(self, *args, destination=None, prefix='', keep_vars=False):
        """The wrapped module's state dict: keys without a ``module.`` prefix."""
        return self.module.state_dict(*args, destination=destination, prefix=prefix,
                                      keep_vars=keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Loads into the wrapped module; keys with a ``module.`` prefix (PyTorch's DDP
        checkpoints) are accepted too."""
        keys = list(state_dict.keys())
        if keys and all(k.startswith('module.') for k in keys):
            from collections import OrderedDict
            state_dict = OrderedDict((k[len('module.'):], v) for k, v in state_dict.items())
        return self.module.load_state_dict(state_dict, strict=strict, assign=assign)

    def extra_repr(self):
        return (f'world_size={self._world}, buckets={len(self._buckets)}, '
                f'bucket_cap_mb={self.bucket_cap_mb}')

    def __getstate__(self):
        raise TypeError('DistributedDataParallel cannot be pickled: save its state_dict() '
                        '(or the wrapped module) instead')
