"""A long-running command stops on SIGTERM or SIGINT, whoever sends it and however often (docs/serving.md §7).

The command's loop waits on a ``threading.Event``; a signal must set it. A signal handler must not
call ``Event.set`` itself: the handler runs on the main thread, between two of its bytecodes, and
``set`` takes the event's lock, which that same thread may be holding at that moment: a main thread
woken from ``stop.wait`` by a first signal is inside the event's own code. A second signal arriving
then (SIGTERM to a whole process group, then again from ``bin/demo``'s trap) left the handler waiting
forever on a lock its own thread held, and ``follow_replicas`` and ``demo_activity`` never stopped.

So the handlers here do nothing in Python: the interpreter's C-level handler writes each signal's
number to a pipe (``signal.set_wakeup_fd``), and a thread reading that pipe sets the event from
ordinary code, where waiting for the event's lock is harmless.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_DONE = b"\0"  # no signal has number 0: written on leaving, it ends the reader


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Inside, SIGTERM and SIGINT set ``stop`` (and raise nothing, so no write is cut in half); after
    a stop, they are ignored to the end of the process.

    Off the main thread (a test calling the command from a thread) no handler can be installed; the
    caller then sets ``stop`` itself.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)  # the C handler's write must never block
    previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    # A Python handler, even one doing nothing, is what makes the interpreter catch the signal (and
    # write it to the pipe) rather than die of it, or ignore it: a shell starts its background jobs
    # with SIGINT ignored.
    previous = {sig: signal.signal(sig, _ignore_here) for sig in STOP_SIGNALS}
    reader = threading.Thread(target=_set_on_stop_signal, args=(read_end, stop), name="stop-signals", daemon=True)
    reader.start()
    try:
        yield
    finally:
        # Once stopping, the process is on its way out: a repeated Ctrl-C or SIGTERM must not turn the
        # end of a clean stop into a traceback or a kill, so the signals stay ignored.
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_IGN if stop.is_set() else handler)
        signal.set_wakeup_fd(previous_fd)
        os.write(write_end, _DONE)
        reader.join()
        os.close(read_end)
        os.close(write_end)


def _ignore_here(signum: int, frame: object) -> None:
    """The signal's work is done by the pipe's reader."""


def _set_on_stop_signal(read_end: int, stop: threading.Event) -> None:
    while (received := os.read(read_end, 1)) not in (_DONE, b""):
        # The pipe also carries any other signal some library installed a Python handler for.
        if received[0] in STOP_SIGNALS:
            stop.set()
