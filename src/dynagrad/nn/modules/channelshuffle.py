"""ChannelShuffle."""

__all__ = []
