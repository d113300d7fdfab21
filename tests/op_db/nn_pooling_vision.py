"""Rows for dynagrad.nn.functional: pooling_vision."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


OPS = []
