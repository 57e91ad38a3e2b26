"""The Memory panel page fixtures (signed-in clients, access postures) and the two read paths."""

from tests.views.conftest import client_for, posture, realm_aliases_allowed  # noqa: F401
from tests.read_paths import read_path  # noqa: F401
