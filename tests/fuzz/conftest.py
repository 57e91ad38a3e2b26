from tests.rpc.conftest import signed_in, world, world_files  # noqa: F401  (fixtures)
