"""``stop_on_signals``: a command's loop ends on SIGTERM or SIGINT however the signals arrive
(docs/serving.md §7).

The failure this guards against was intermittent: a signal handler that set the loop's Event hung
the process for good when a second signal landed while the main thread, just woken by the first,
held the Event's lock (SIGTERM to a process group, then again from bin/demo's trap). About one
process in thirty hung that way here; so many processes are sent two signals a fraction of a
millisecond apart, and every one must end.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

from tests.support.servers import REPO

LOOP = """
import threading
from memory_panel.management.stopping import stop_on_signals

stop = threading.Event()
with stop_on_signals(stop):
    print("waiting", flush=True)
    while not stop.wait(1.0):
        pass
print("stopped", flush=True)
"""

PROCESSES = 200


def _loop(**popen) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", LOOP], cwd=REPO, stdout=subprocess.PIPE, text=True, **popen)
    assert process.stdout.readline() == "waiting\n"
    return process


def _spin(seconds: float) -> None:
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


def test_two_signals_in_quick_succession_never_hang_the_loop():
    hung = 0
    rng = random.Random(7)
    for n in range(PROCESSES):
        process = _loop()
        sig = signal.SIGTERM if n % 2 else signal.SIGINT
        process.send_signal(sig)
        _spin(rng.uniform(0, 0.0005))  # lands the second one while the first is being handled
        if process.poll() is None:
            process.send_signal(sig)
        try:
            assert process.communicate(timeout=5)[0] == "stopped\n"
        except subprocess.TimeoutExpired:
            hung += 1
            process.kill()
            process.wait()
    assert hung == 0, f"{hung} of {PROCESSES} processes never stopped"


def test_sigint_stops_the_loop_even_when_the_process_started_with_it_ignored():
    # A non-interactive shell starts its background jobs with SIGINT ignored (bin/demo's children).
    process = _loop(preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    process.send_signal(signal.SIGINT)
    assert process.communicate(timeout=5)[0] == "stopped\n"


def test_other_signals_leave_the_loop_running():
    process = _loop()
    try:
        process.send_signal(signal.SIGWINCH)  # the default disposition ignores it; no Python handler either
        time.sleep(0.3)
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.communicate(timeout=5)[0] == "stopped\n"
