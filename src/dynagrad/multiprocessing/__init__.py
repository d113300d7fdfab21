"""``dynagrad.multiprocessing``: PyTorch's ``torch.multiprocessing`` API (work in progress)."""
