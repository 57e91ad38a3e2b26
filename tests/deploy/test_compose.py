"""compose.yaml, without a Docker daemon: valid against the compose specification's own JSON
schema (the copy check-jsonschema ships), hardened, ordered by health (docs/deploy.md §2)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.support.deploy import COMPOSE, ENV_EXAMPLE, TOOLS, compose, image_env

# ${NAME}, ${NAME:-default}, ${NAME:?message}, …: every variable compose reads from .env.
VARIABLE = re.compile(r"\$\{([A-Z][A-Z0-9_]*)(?:(:?[-?+])([^}]*))?\}")
SERVICES = compose()["services"]
CONSOLE_IMAGE_SERVICES = ["console", "migrate", "follow_replicas"]


def test_the_file_is_valid_against_the_compose_specification():
    result = subprocess.run(
        [str(TOOLS / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(COMPOSE)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_service_runs_read_only_with_no_capability_and_no_new_privileges(name: str):
    service = SERVICES[name]
    assert service["read_only"] is True
    assert service["cap_drop"] == ["ALL"]
    assert service["security_opt"] == ["no-new-privileges:true"]
    assert "/tmp" in service["tmpfs"]


@pytest.mark.parametrize("name", CONSOLE_IMAGE_SERVICES)
def test_the_console_image_writes_only_the_state_volume_and_tmp(name: str):
    service = SERVICES[name]
    assert service["volumes"] == [f"state:{image_env()['MOBKIT_PERSISTENT_STATE']}"]
    assert service["tmpfs"] == ["/tmp"]
    assert "state" in compose()["volumes"]


def test_the_console_starts_after_the_migrations_and_once_postgres_and_redis_are_healthy():
    assert SERVICES["console"]["command"] == ["bin/serve"]
    assert SERVICES["console"]["depends_on"] == {
        "migrate": {"condition": "service_completed_successfully"},
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    assert SERVICES["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert SERVICES["migrate"]["restart"] == "no"
    assert SERVICES["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}


@pytest.mark.parametrize("name", ["postgres", "redis"])
def test_the_services_the_console_waits_for_say_when_they_are_healthy(name: str):
    test = SERVICES[name]["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] in {"pg_isready", "redis-cli"}


def test_follow_replicas_is_a_service_of_its_own_on_the_console_image():
    follow = SERVICES["follow_replicas"]
    assert follow["command"] == ["python", "manage.py", "follow_replicas"]
    assert follow["image"] == SERVICES["console"]["image"]
    # It has no HTTP server: the image's health check would call it unhealthy.
    assert follow["healthcheck"] == {"disable": True}
    assert follow["environment"]["MOBKIT_REPLICA_SOURCES"] == SERVICES["console"]["environment"]["MOBKIT_REPLICA_SOURCES"]


def test_the_console_reaches_postgres_and_redis_by_their_service_names():
    environment = SERVICES["console"]["environment"]
    assert environment["DATABASE_URL"].endswith("@postgres:5432/mobkit")
    assert environment["REDIS_URL"] == "redis://redis:6379/0"


def test_a_missing_secret_stops_compose_with_a_message_that_says_where_to_set_it():
    required = {name: message for name, operator, message in VARIABLE.findall(COMPOSE.read_text()) if operator == ":?"}
    assert set(required) == {"DJANGO_SECRET_KEY", "POSTGRES_PASSWORD"}
    for name, message in required.items():
        assert message.startswith(f"{name} is required") and ".env.example .env" in message


def test_env_example_names_every_variable_compose_reads_and_leaves_the_secrets_empty():
    example = ENV_EXAMPLE.read_text()
    listed = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", example, re.MULTILINE))
    read = {name for name, _, _ in VARIABLE.findall(COMPOSE.read_text())}
    assert read <= listed, f"not in .env.example: {sorted(read - listed)}"
    # Empty, so a copied .env stops compose until they are filled in (":?" refuses an empty value too).
    assert re.search(r"^DJANGO_SECRET_KEY=$", example, re.MULTILINE)
    assert re.search(r"^POSTGRES_PASSWORD=$", example, re.MULTILINE)
