"""Rows for dynagrad.nn.functional: linear_conv."""
import numpy as np  # noqa: F401

from ._core import *  # noqa: F401,F403


OPS = []
