"""The Memory panel page fixtures (signed-in clients, access postures), shared with tests/views."""

from tests.views.conftest import client_for, posture, realm_aliases_allowed  # noqa: F401
