"""Child processes (servers, CLI runs) that die with the process that started them.

``spawn(cmd, **popen_kwargs)`` is ``subprocess.Popen`` plus three guards, so a test run
killed mid-way (``kill -9``, a CI timeout) leaves no server or CLI run behind:

- the child leads its own process group, so it and everything it starts (an MLflow
  server's workers, a pool's worker processes) are killed as one with ``os.killpg``;
- on Linux it gets ``PR_SET_PDEATHSIG`` = SIGKILL: the kernel kills it as soon as the
  thread that started it is gone, however that thread died;
- a watcher process (its own session, so Ctrl-C does not stop it) holds a pipe from
  this process; when the pipe closes without a goodbye, this process died, and the
  watcher kills the child's whole group: the grandchildren too, which the parent-death
  signal does not reach.

``stop(proc)`` kills the group (SIGTERM first when ``grace`` is given), waits for the
child and dismisses the watcher. Call ``spawn`` from the main thread: the parent-death
signal follows the thread that forked, not the process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["spawn", "spawned", "stop"]

_PR_SET_PDEATHSIG = 1
#: Waits for this process's goodbye (one byte) or death (EOF: then kills the group); leaves
#: on its own once the group is empty, so a finished child's number, reused, is never hit.
_WATCHER = """
import os, select, signal, sys
pgid = int(sys.argv[1])
while True:
    if select.select([sys.stdin], [], [], 1.0)[0]:
        if not os.read(sys.stdin.fileno(), 1):
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        break
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        break
    except OSError:
        pass
"""
_watchers: dict[int, subprocess.Popen[bytes]] = {}


@functools.cache
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), looked up here: after the fork only the call itself runs."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with(parent: int, prctl: Callable[..., int] | None) -> None:
    """In the child, before exec: be killed when ``parent`` goes."""
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os.kill(os.getpid(), signal.SIGKILL)


def spawn(args: Sequence[str | os.PathLike[str]], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **kwargs)`` whose process group dies with this process."""
    if kwargs.get("preexec_fn") is not None or kwargs.get("start_new_session") is False:
        raise ValueError("spawn sets preexec_fn and start_new_session itself")
    parent, prctl = os.getpid(), _prctl()
    kwargs["start_new_session"] = True
    kwargs["preexec_fn"] = lambda: _die_with(parent, prctl)
    proc: subprocess.Popen[Any] = subprocess.Popen(args, **kwargs)
    try:
        watcher = subprocess.Popen(
            [sys.executable, "-S", "-c", _WATCHER, str(proc.pid)], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except BaseException:
        stop(proc)
        raise
    _watchers[proc.pid] = watcher
    return proc


def stop(proc: subprocess.Popen[Any], *, grace: float = 0.0, timeout: float = 30.0) -> None:
    """Kill ``proc``'s process group (after SIGTERM and ``grace`` seconds, when given), wait
    for ``proc``, and dismiss its watcher."""
    try:
        if grace > 0 and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        with contextlib.suppress(ProcessLookupError):  # the group outlives a finished leader
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout)
    finally:
        watcher = _watchers.pop(proc.pid, None)
        if watcher is not None and watcher.stdin is not None:
            with contextlib.suppress(OSError):
                watcher.stdin.write(b"x")  # goodbye: the group is already gone
                watcher.stdin.close()
            watcher.wait(timeout)


@contextlib.contextmanager
def spawned(args: Sequence[str | os.PathLike[str]], *, grace: float = 0.0,
            **kwargs: Any) -> Iterator[subprocess.Popen[Any]]:
    """``spawn`` for the length of a ``with`` block, then ``stop``."""
    proc = spawn(args, **kwargs)
    try:
        yield proc
    finally:
        stop(proc, grace=grace)
