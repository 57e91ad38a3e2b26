"""Diff tests reuse the RPC tests' signing-in posture fixture (tests/rpc/conftest.py)."""

from tests.rpc.conftest import posture  # noqa: F401
