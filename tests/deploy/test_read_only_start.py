"""bin/serve as the image runs it: the application directory (code, .venv, collected static files)
mounted read-only, so the state directory and /tmp are the only places it can write, and probed
the way a kubelet and the image's HEALTHCHECK probe it (docs/deploy.md §1).

The read-only mount is a bind mount in a mount namespace of the server's own, which needs root
(CI runs as root); elsewhere these tests skip.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.support.deploy import REPO, dockerfile_stages
from tests.support.servers import Serve, deployment_env, start_serve, stop_serve

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="mounting the application directory read-only needs root and unshare(1)",
)

# The server's only process runs in a mount namespace where REPO is read-only.
READ_ONLY_REPO = [
    "unshare", "--mount", "--", "sh", "-c",
    'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"', str(REPO),
]
# A kubelet's probe names the pod's address, never a host the console serves.
POD_HOST = "10.1.2.3:8000"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Serve]:
    state = tmp_path_factory.mktemp("read-only-start") / "state"
    (state / "console").mkdir(parents=True)
    env = deployment_env(state, MOBKIT_COLLECTSTATIC="0", HOST="127.0.0.1",
                         DJANGO_ALLOWED_HOSTS="console.example.com,127.0.0.1")
    served = start_serve(env, workers=1, wrapper=READ_ONLY_REPO)
    try:
        yield served
    finally:
        stop_serve(served)


def _get(server: Serve, path: str, host: str = "127.0.0.1") -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_application_directory_really_is_read_only_for_the_server(server: Serve):
    mounts = (f"/proc/{server.process.pid}/mountinfo")
    with open(mounts, encoding="utf-8") as table:
        options = [line.split()[5] for line in table if line.split()[4] == str(REPO)]
    assert options and options[-1].split(",")[0] == "ro"


def test_pages_are_served_with_the_static_files_collected_before_start(server: Serve):
    status, body = _get(server, "/console/login/")
    assert status == 200
    stylesheet = re.search(rb'/static/(css/console\.[0-9a-f]{12}\.css)', body)
    assert stylesheet, "the page names the hashed stylesheet collectstatic wrote"
    assert _get(server, f"/static/{stylesheet.group(1).decode()}")[0] == 200


def test_the_signing_key_is_generated_into_the_state_directory(server: Serve):
    state = server.log.parent
    assert (state / "console" / "secret_key").stat().st_mode & 0o777 == 0o600


def test_the_liveness_route_answers_a_probe_naming_the_pod_address(server: Serve):
    assert _get(server, "/healthz", host=POD_HOST)[0] == 200


def test_the_readiness_route_answers_a_probe_naming_the_pod_address(server: Serve):
    status, body = _get(server, "/readyz", host=POD_HOST)
    assert status in {200, 503}
    assert "ok" in json.loads(body)


def test_the_image_healthcheck_command_passes_against_the_running_server(server: Serve):
    (healthcheck,) = [i for i in dockerfile_stages()[-1] if i.keyword == "HEALTHCHECK"]
    program, *arguments = healthcheck.exec_form()
    assert program == "python"
    result = subprocess.run([sys.executable, *arguments], env={**os.environ, "PORT": str(server.port)},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
