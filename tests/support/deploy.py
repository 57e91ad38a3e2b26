"""The deployment files as the tests read them: the Dockerfile's instructions, compose.yaml, and
the Helm chart rendered offline by Helm's own Go SDK (helm-python-sdk), no cluster involved."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import helm_python
import yaml

from tests.support.postures import POSTURES

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "compose.yaml"
ENV_EXAMPLE = REPO / ".env.example"
CHART = REPO / "deploy" / "helm" / "mobkit-console"
# The tools the dev extra installs sit beside this interpreter.
TOOLS = Path(sys.executable).parent

# Every part of the chart switched on: what the chart tests render besides the defaults.
EVERYTHING_ON: dict[str, Any] = {
    "replicaCount": 2,
    "workers": 2,
    "ingress": {"enabled": True, "className": "nginx",
                "hosts": [{"host": "console.example.com", "paths": [{"path": "/", "pathType": "Prefix"}]}],
                "tls": [{"secretName": "console-tls", "hosts": ["console.example.com"]}]},
    "config": {"behindProxy": True, "secureCookies": True, "allowedOrigins": ["https://console.example.com"],
               "otlpEndpoint": "http://otel-collector:4318",
               "oidc": {"issuer": "https://sso.example.com/realms/staff", "audience": "mobkit-console",
                        "clientId": "mobkit-console", "groupsClaim": "groups"}},
    "secrets": {name: {"existingSecret": "mobkit-console", "key": name}
                for name in ("secretKey", "databaseUrl", "redisUrl", "ingestToken", "oidcClientSecret")}
    | {"superuser": {"existingSecret": "mobkit-console-admin", "usernameKey": "username",
                     "passwordKey": "password", "emailKey": "email"}},
    "access": {"config": POSTURES["reviewer"]},
    "replicaSources": {"sources": {"east": "s3://mobkit-replicas/east", "west": "file:///srv/replicas/west"},
                       "credentialsSecret": "replica-store-credentials"},
    "persistence": {"accessModes": ["ReadWriteMany"]},
}


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD/ENTRYPOINT/HEALTHCHECK CMD, else None (shell form)."""
        text = self.arguments
        if self.keyword == "HEALTHCHECK":
            text = text[text.index(" CMD ") + len(" CMD "):].strip() if " CMD " in f" {text} " else ""
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) and all(isinstance(part, str) for part in parsed) else None


def dockerfile_stages() -> list[list[Instruction]]:
    """The ARGs before the first FROM, then each build stage's instructions from its FROM on."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    stages: list[list[Instruction]] = [[]]
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, arguments = line.partition(" ")
        instruction = Instruction(keyword.upper(), " ".join(arguments.split()))
        if instruction.keyword == "FROM":
            stages.append([])
        stages[-1].append(instruction)
    return stages


def image_env() -> dict[str, str]:
    """The final stage's ENV, as the running container sees it."""
    env: dict[str, str] = {}
    for instruction in dockerfile_stages()[-1]:
        if instruction.keyword == "ENV":
            for pair in instruction.arguments.split():
                name, _, value = pair.partition("=")
                env[name] = value
    return env


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def chart_render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every Kubernetes object the chart renders with ``values`` (release ``console`` in ``mobkit``)."""
    with helm_python.Chart.load(CHART) as chart:
        rendered = chart.render(values or {}, name="console", namespace="mobkit")
    return [
        document
        for name, text in sorted(rendered.items())
        if name.endswith((".yaml", ".yml"))
        for document in yaml.safe_load_all(text)
        if document
    ]


def objects_of(manifests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [manifest for manifest in manifests if manifest["kind"] == kind]


def named(manifests: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    (found,) = [m for m in objects_of(manifests, kind) if m["metadata"]["name"] == name]
    return found


def container_env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A container's env entries by name (a name given twice would be a chart bug: it fails here)."""
    names = [entry["name"] for entry in container.get("env", [])]
    assert len(names) == len(set(names)), f"{container['name']} sets an environment variable twice: {names}"
    return {entry["name"]: entry for entry in container.get("env", [])}
