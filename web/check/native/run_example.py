"""Runs one playground example under native CPython and prints, as JSON, what it printed and
the losses it reported: the reference the browser check compares the page with."""
import contextlib
import io
import json
import runpy
import sys

import playground

buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    runpy.run_path(sys.argv[1], run_name='__main__')
json.dump({'output': buffer.getvalue(), 'losses': playground.LOSSES}, sys.stdout)
