"""``Join``: training on ranks that see different numbers of batches (uneven inputs).

Ranks that run out early would need to shadow the others' collectives, which dynagrad's
DistributedDataParallel does not do. On one process (or with ``enable=False``) there is
nothing to shadow and the context does nothing; on several it says so."""

__all__ = ['Join', 'Joinable', 'JoinHook']


class JoinHook:
    """What a ``Joinable`` does while it waits for the other ranks."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable:
    """A class that can take part in ``Join`` (PyTorch's DDP and ZeroRedundancyOptimizer)."""

    def join_hook(self, **kwargs):
        return JoinHook()

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError('The join context manager requires at least one joinable')
        self.joinables, self.enable = list(joinables), enable
        self.throw_on_early_termination = throw_on_early_termination

    def __enter__(self):
        from .. import get_world_size, is_initialized
        if self.enable and is_initialized() and get_world_size() > 1:
            raise NotImplementedError(
                'dynagrad.distributed does not train on uneven inputs (Join): give every rank '
                'the same number of batches (DistributedSampler(..., drop_last=True))')
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def notify_join_context(joinable):
        return None
