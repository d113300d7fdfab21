"""The DataLoader's machinery, where PyTorch keeps it (``torch.utils.data._utils``): the
fetchers, the worker processes and their channel to the main process."""
# How often (seconds) an idle worker checks that the main process is still there.
MP_STATUS_CHECK_INTERVAL = 5.0

from . import fetch, worker  # noqa: F401,E402   (_utils.collate: see utils/data/__init__)
