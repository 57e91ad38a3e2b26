"""Export tests reuse the RPC tests' world, postures and signed-in client (tests/rpc/conftest.py)."""

from tests.rpc.conftest import posture, signed_in, world, world_files  # noqa: F401
