"""The Dockerfile, read without building it: hadolint's rules, and what the image must hold for
bin/serve to start on a read-only root with nothing left to install (docs/deploy.md §1)."""

from __future__ import annotations

import re
import shlex
import subprocess

from tests.support.deploy import DOCKERFILE, REPO, TOOLS, compose, dockerfile_stages, image_env


def _last(stage, keyword):
    (found,) = [i for i in stage if i.keyword == keyword][-1:]
    return found


def test_hadolint_finds_nothing_to_report():
    result = subprocess.run([str(TOOLS / "hadolint"), "--no-color", str(DOCKERFILE)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_base_image_is_a_build_argument_defaulting_to_debian_bookworm_python_3_11_slim():
    preamble, *stages = dockerfile_stages()
    assert [i.arguments for i in preamble] == ["BASE_IMAGE=python:3.11-slim-bookworm"]
    assert [stage[0].arguments for stage in stages] == ["${BASE_IMAGE} AS build", "${BASE_IMAGE}"]


def test_the_image_runs_as_a_numeric_user_that_is_not_root():
    user = _last(dockerfile_stages()[-1], "USER").arguments
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) > 0 and gid.isdigit() and int(gid) > 0, user


def test_the_server_starts_in_exec_form_with_bin_serve_listening_on_every_address():
    final = dockerfile_stages()[-1]
    assert _last(final, "CMD").exec_form() == ["bin/serve"]
    assert not [i for i in final if i.keyword == "ENTRYPOINT"]
    assert image_env()["HOST"] == "0.0.0.0"


def test_static_files_are_collected_when_the_image_is_built_and_never_at_start():
    build_runs = " ".join(i.arguments for i in dockerfile_stages()[1] if i.keyword == "RUN")
    assert "manage.py collectstatic --noinput" in build_runs
    assert image_env()["MOBKIT_COLLECTSTATIC"] == "0"
    assert "MOBKIT_COLLECTSTATIC" in (REPO / "bin" / "serve").read_text()


def test_the_environment_is_built_with_the_stamp_bin_serve_checks_so_nothing_installs_at_start():
    stamp = re.search(r"^stamp=(\S+)$", (REPO / "bin" / "lib" / "venv.sh").read_text(), re.MULTILINE).group(1)
    build_runs = [shlex.split(i.arguments) for i in dockerfile_stages()[1] if i.keyword == "RUN"]
    # The stamp is the build's last step, after every file bin/lib/venv.sh compares it with.
    assert build_runs[-1][-2:] == ["touch", stamp]
    assert "python3 -m venv .venv" in " ".join(" ".join(run) for run in build_runs)
    assert _last(dockerfile_stages()[-1], "WORKDIR").arguments == "/app"


def test_the_healthcheck_asks_the_liveness_route_with_python_not_curl():
    healthcheck = _last(dockerfile_stages()[-1], "HEALTHCHECK")
    command = healthcheck.exec_form()
    assert command is not None and command[:2] == ["python", "-c"]
    assert "urllib.request" in command[2] and "/healthz" in command[2]
    assert "curl" not in healthcheck.arguments


def test_the_state_directory_is_where_compose_and_the_chart_mount_the_state_volume():
    state = image_env()["MOBKIT_PERSISTENT_STATE"]
    console = compose()["services"]["console"]
    assert f"state:{state}" in console["volumes"]
    assert f"mountPath: {state}" in (REPO / "deploy" / "helm" / "mobkit-console" / "values.yaml").read_text()


def test_the_build_context_leaves_out_the_environment_the_state_and_the_secrets():
    ignored = set((REPO / ".dockerignore").read_text().split())
    assert {".git", ".venv", ".mobkit", "staticfiles", ".env", "tests"} <= ignored
