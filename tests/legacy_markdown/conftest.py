from tests.ledger.support import access_posture, console, rpc  # noqa: F401  (fixtures)
