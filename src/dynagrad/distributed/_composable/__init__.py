"""``torch.distributed._composable``: see ``fsdp``."""
