"""What the console's indexes of a realm share, by job.

The realm index (``memory_panel/store/realm_index.py``, docs/realm-index.md) and the search index
(``memory_panel/store/search_index.py``, docs/search.md) are both SQLite files the console derives
from a realm file it may only read. Each is an ``IndexFamily`` (``family.py``): its own
directory, schema, ``fill`` (build from one snapshot) and ``read_delta``/``apply_delta`` (catch up
from the audit feed). The rest is here, once:

- ``generations.py``: ``gen-<n>.sqlite3`` files written as ``.partial`` and renamed when complete,
  one builder per realm at a time under ``build.lock``, and the connections that read them
  (docs/realm-index.md §2);
- ``catch_up.py``: applying the realm's audit rows past a generation's high-water mark, and
  telling when only a rebuild can help (docs/realm-index.md §4);
- ``numbering.py``: each repeated text stored once as a number, and filters on those numbers
  (docs/realm-index.md §3, §5);
- ``builds.py``: background runs, one thread per realm at a time in a process; ``family.py``
  starts a realm's builds there, its first builds one after another (docs/realm-index.md §5).

Whether a realm file changed since the last look is ``memory_panel/store/changes.py``, shared
with the timeline watcher and replica copies.
"""
