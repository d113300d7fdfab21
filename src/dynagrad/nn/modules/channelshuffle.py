"""ChannelShuffle."""
from ..module import Module
from .. import functional as F


class ChannelShuffle(Module):
    """Split the channels into ``groups`` and interleave them (``F.channel_shuffle``)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f'groups={self.groups}'


__all__ = ['ChannelShuffle']
