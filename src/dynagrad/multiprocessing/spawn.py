"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` processes, as
``torch.multiprocessing.spawn`` does.

A process whose ``fn`` raises writes the traceback to its error file and exits with code
1; ``ProcessContext.join`` then stops the others (SIGTERM, then SIGKILL after the grace
period) and raises ``ProcessRaisedException`` with that traceback, or
``ProcessExitedException`` for a process that died without one (a signal, ``sys.exit``).
"""
import multiprocessing
import os
import signal
import sys
import tempfile
import time
import warnings

from .. import _platform

__all__ = ['ProcessException', 'ProcessRaisedException', 'ProcessExitedException',
           'ProcessContext', 'SpawnContext', 'spawn', 'start_processes']

# How long processes stopped after another's failure get to exit before SIGKILL (seconds),
# when join() is given no grace period.
_TERMINATE_WAIT = 30


class ProcessException(Exception):
    """A process started by ``spawn`` failed: ``error_index`` (its i), ``error_pid``."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """The process's ``fn`` raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_file):
    """The target of each process: ``fn(i, *args)``; a traceback goes to ``error_file``."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass            # the parent is being interrupted too, and says so itself
    except Exception:
        import traceback
        with open(error_file, 'w', encoding='utf-8') as f:
            f.write(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes of one ``start_processes`` call; ``join`` them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait (at most ``timeout`` seconds) for processes to exit. Returns True once all
        have exited successfully, False while some still run; raises as the module
        docstring says when one failed, after stopping the rest."""
        if not self.sentinels:
            return True
        # imported here: it brings subprocess and socket's selectors, a fortieth of
        # ``import dynagrad`` for programs that never start a process
        import multiprocessing.connection
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            done = not self.sentinels
            if done:
                self._remove_error_files()
            return done
        self._stop_the_rest(grace_period)
        failed = self.processes[error_index]
        error_file = self.error_files[error_index]
        try:
            with open(error_file, encoding='utf-8') as f:
                original_trace = f.read()
        except FileNotFoundError:
            original_trace = None
        finally:
            self._remove_error_files()
        if original_trace is None:
            code = failed.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f'<Unknown signal {-code}>'
                raise ProcessExitedException(
                    f'process {error_index} terminated with signal {name}',
                    error_index=error_index, error_pid=failed.pid, exit_code=code,
                    signal_name=name)
            raise ProcessExitedException(
                f'process {error_index} terminated with exit code {code}',
                error_index=error_index, error_pid=failed.pid, exit_code=code)
        msg = (f'\n\n-- Process {error_index} terminated with the following error:\n'
               + original_trace)
        raise ProcessRaisedException(msg, error_index, failed.pid)

    def _stop_the_rest(self, grace_period):
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        # SIGTERM may go unanswered (a process stuck in native code): SIGKILL after a while.
        wait = _TERMINATE_WAIT if grace_period is None else grace_period
        deadline = time.monotonic() + wait
        for p in self.processes:
            p.join(max(deadline - time.monotonic(), 0))
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()
        self.sentinels.clear()

    def _remove_error_files(self):
        for path in self.error_files:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


class SpawnContext(ProcessContext):
    """The old name of ``ProcessContext``."""

    def __init__(self, processes, error_files):
        warnings.warn('SpawnContext is renamed to ProcessContext since 1.4 release.',
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    """Start ``nprocs`` processes running ``fn(i, *args)`` (i = 0 .. nprocs-1) with
    ``start_method``; join them (raising if one fails) or, with ``join=False``, return
    their ``ProcessContext``."""
    _platform.require_processes('dynagrad.multiprocessing.start_processes')
    ctx = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        # The child creates the file only if fn raises: its existence is the signal.
        fd, error_file = tempfile.mkstemp(prefix='dynagrad-errorfile-', suffix='.txt')
        os.close(fd)
        os.unlink(error_file)
        process = ctx.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        error_files.append(error_file)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method='spawn'):
    """``start_processes`` with the ``spawn`` start method (``fn`` must be picklable: a
    module-level function)."""
    if start_method != 'spawn':
        warnings.warn(f'This method only supports start_method=spawn (got: {start_method}).\n'
                      f'To use a different start_method use:\n\t\t '
                      f'dynagrad.multiprocessing.start_processes(...)', FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method)
