"""Shared test configuration: the op-conformance summary line."""
import sys


def pytest_terminal_summary(terminalreporter):
    op_db = sys.modules.get('op_db')
    if op_db is not None and op_db.STATS['samples']:
        terminalreporter.write_line(
            f"op conformance: {len(op_db.STATS['ops'])} ops covered, "
            f"{len(op_db.STATS['samples'])} samples run")
