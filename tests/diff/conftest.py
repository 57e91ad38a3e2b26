"""Diff tests reuse the RPC tests' signed-in client and postures (tests/rpc/conftest.py)."""

from tests.rpc.conftest import posture, signed_in, world, world_files  # noqa: F401
