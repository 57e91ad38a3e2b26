"""Plain helpers the tests share: no fixtures here, only functions, classes and constants.

- ``postures``: every access.toml text the suite runs under, named by posture, and its subjects.
- ``written``: the tests' own account of what they wrote (``Written``, ``Scribe``) and the wire
  rows it implies, built without the console's selectors or serialisers.
- ``worlds``: the realm-world builders (one module, parametrised recipes over the store writer).
- ``rpc`` / ``clients`` / ``html`` / ``sockets``: calling the console over JSON-RPC, HTTP, HTML
  and WebSocket.
- ``files``: ledger state files and legacy markdown files as MobKit writes them.
- ``realm_guard``: letting read-only realm aliases past pytest-django's database guard.

conftest.py files turn these into fixtures; test modules import from here, never from a conftest
or another test module (tests/architecture/test_test_layout.py checks it).
"""
