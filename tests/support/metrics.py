"""Reading what ``bin/serve``'s metrics process serves (docs/serving.md §8)."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

# (sample name, sorted label pairs) → value
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape_text(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        return response.read().decode()


def scrape(port: int) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scrape_text(port))
        for sample in family.samples
    }


def sample_sum(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(value for (sample, pairs), value in samples.items() if sample == name and wanted <= set(pairs))


def wait_metrics(port: int, done: Callable[[Samples], bool], *, timeout_s: float = 30) -> Samples:
    """Scrape until ``done(samples)``; the last scrape either way (the caller asserts on it)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            samples = scrape(port)
        except OSError:
            samples = {}
        if done(samples) or time.monotonic() > deadline:
            return samples
        time.sleep(0.2)
