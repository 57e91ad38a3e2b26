"""MOBKIT_REPLICA_SOURCES: label=<replica URL> pairs, and a bad value stops start-up saying what is wrong
(docs/replicas.md §2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_panel.replica_sources import ReplicaSourcesInvalid, replica_sources_parse

REPO = Path(__file__).resolve().parents[2]


def test_pairs_are_read_in_order_and_the_url_keeps_everything_after_the_first_equals():
    text = " east=file:///srv/replicas/east/ , west=s3://bucket/mobkit?endpoint=http://minio:9000&x=1,"
    assert replica_sources_parse(text) == {
        "east": "file:///srv/replicas/east",
        "west": "s3://bucket/mobkit?endpoint=http://minio:9000&x=1",
    }
    assert replica_sources_parse("") == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("file:///srv/replicas", "'file:///srv/replicas' is not label=<replica URL>"),
        ("=file:///srv", "label '' must be 1-64 letters"),
        ("ea/st=file:///srv", "label 'ea/st' must be 1-64 letters"),
        ("east=file:///a,east=file:///b", "label 'east' is given twice"),
        ("east=/srv/replicas", "east: '/srv/replicas' is not a replica URL"),
        ("east=", "east: '' is not a replica URL"),
    ],
)
def test_a_bad_value_is_refused_naming_the_entry(text: str, says: str):
    with pytest.raises(ReplicaSourcesInvalid) as refused:
        replica_sources_parse(text)
    assert says in str(refused.value)


def test_a_bad_value_stops_start_up_with_the_variable_named(tmp_path):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("MOBKIT_", "DJANGO_"))}
    environment.update(MOBKIT_PERSISTENT_STATE=str(tmp_path), DJANGO_SETTINGS_MODULE="mobkit_console.settings",
                       DJANGO_SECRET_KEY="x" * 50, MOBKIT_REPLICA_SOURCES="east/x=file:///srv")
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, env=environment,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ImproperlyConfigured: MOBKIT_REPLICA_SOURCES: label 'east/x' must be 1-64 letters" in result.stderr
