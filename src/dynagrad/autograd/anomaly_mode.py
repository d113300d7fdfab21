"""PyTorch's module path for anomaly detection (``torch.autograd.anomaly_mode``); it lives in
``anomaly.py``."""
from .anomaly import detect_anomaly, set_detect_anomaly  # noqa: F401

__all__ = ['detect_anomaly', 'set_detect_anomaly']
