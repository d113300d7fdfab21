"""Rows for dynagrad.nn.functional: loss_attention."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


OPS = []
