"""The Helm chart, linted and rendered offline by Helm's own Go SDK, every object checked against
Kubernetes' schemas (oldest supported and newest), then read for what it promises (docs/deploy.md §3)."""

from __future__ import annotations

import re
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from memory_panel.replica_sources import replica_sources_parse
from tests.support.deploy import (
    CHART, EVERYTHING_ON, REPO, chart_render, container_env, image_env, named, objects_of,
)

VALUE_SETS = {"defaults": {}, "everything-on": EVERYTHING_ON}
KUBERNETES_VERSIONS = ["1.25.0", kubernetes_validate.latest_version()]
DEFAULTS = chart_render()
FULL = chart_render(EVERYTHING_ON)


def _deployments(manifests):
    return objects_of(manifests, "Deployment")


def _console(manifests) -> dict[str, Any]:
    (container,) = named(manifests, "Deployment", "console-mobkit-console")["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("values", VALUE_SETS.values(), ids=VALUE_SETS.keys())
def test_helm_lint_reports_no_warning_or_error(values):
    report = helm_python.lint(CHART, values, strict=True)
    assert report["errors"] == []
    # Severity 1 is information (Chart.yaml's "icon is recommended"); 2 and above are findings.
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("values", VALUE_SETS, ids=VALUE_SETS.keys())
def test_every_rendered_object_is_valid_kubernetes_in_strict_mode(values: str, version: str):
    manifests = DEFAULTS if values == "defaults" else FULL
    for manifest in manifests:
        kubernetes_validate.validate(manifest, version, strict=True)


def test_the_defaults_render_the_console_with_its_state_and_without_the_optional_parts():
    kinds = sorted(m["kind"] for m in DEFAULTS)
    assert kinds == ["Deployment", "PersistentVolumeClaim", "PodDisruptionBudget", "Service", "Service",
                     "ServiceAccount"]


def test_everything_on_adds_the_ingress_the_access_config_map_and_follow_replicas():
    assert {m["kind"] for m in FULL} >= {"Ingress", "ConfigMap"}
    assert [d["metadata"]["name"] for d in _deployments(FULL)] == [
        "console-mobkit-console", "console-mobkit-console-follow-replicas"]


@pytest.mark.parametrize("values", VALUE_SETS, ids=VALUE_SETS.keys())
def test_the_probes_ask_the_liveness_and_readiness_routes_on_the_http_port(values: str):
    console = _console(DEFAULTS if values == "defaults" else FULL)
    assert console["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert console["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert console["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_probed_paths_are_routes_of_the_console(path: str):
    # The probes are routed by the ASGI application, before Django (mobkit_console/asgi.py).
    from mobkit_console import probes
    from mobkit_console.asgi import console_application

    routes = console_application.application_mapping["http"].routes
    answering = next(route.callback for route in routes if route.pattern.match(path.lstrip("/")))
    assert answering in (probes.healthz, probes.readyz)


@pytest.mark.parametrize("values", VALUE_SETS, ids=VALUE_SETS.keys())
def test_every_pod_runs_as_a_non_root_user_on_a_read_only_root_with_no_capability(values: str):
    for deployment in _deployments(DEFAULTS if values == "defaults" else FULL):
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == int(_image_user())
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"] == {"drop": ["ALL"]}
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert mounts["/tmp"] == "tmp"
            assert set(mounts) <= {"/tmp", image_env()["MOBKIT_PERSISTENT_STATE"], "/etc/mobkit-console/access"}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert "emptyDir" in volumes["tmp"]


def _image_user() -> str:
    text = (REPO / "Dockerfile").read_text()
    return re.findall(r"^USER (\d+):\d+$", text, re.MULTILINE)[-1]


@pytest.mark.parametrize("values", VALUE_SETS, ids=VALUE_SETS.keys())
def test_the_metrics_port_is_never_on_the_service_the_ingress_routes_to(values: str):
    manifests = DEFAULTS if values == "defaults" else FULL
    public = named(manifests, "Service", "console-mobkit-console")
    assert [port["targetPort"] for port in public["spec"]["ports"]] == ["http"]
    metrics = named(manifests, "Service", "console-mobkit-console-metrics")
    assert [port["port"] for port in metrics["spec"]["ports"]] == [9464]
    assert container_env(_console(manifests))["METRICS_PORT"]["value"] == "9464"
    for ingress in objects_of(manifests, "Ingress"):
        backends = [path["backend"]["service"] for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
        assert backends == [{"name": "console-mobkit-console", "port": {"name": "http"}}]


def test_the_state_volume_is_mounted_where_the_console_keeps_its_state():
    console = _console(DEFAULTS)
    state = container_env(console)["MOBKIT_PERSISTENT_STATE"]["value"]
    assert state == image_env()["MOBKIT_PERSISTENT_STATE"]
    assert {"name": "state", "mountPath": state} in console["volumeMounts"]
    pod = named(DEFAULTS, "Deployment", "console-mobkit-console")["spec"]["template"]["spec"]
    claim = {v["name"]: v for v in pod["volumes"]}["state"]["persistentVolumeClaim"]["claimName"]
    assert named(DEFAULTS, "PersistentVolumeClaim", claim)["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"}


def test_access_toml_is_mounted_as_a_directory_where_mobkit_access_config_points():
    console = _console(FULL)
    path = container_env(console)["MOBKIT_ACCESS_CONFIG"]["value"]
    directory, _, file_name = path.rpartition("/")
    # Not a subPath mount: kubelet updates a mounted directory in place, and the console reloads it.
    assert {"name": "access", "mountPath": directory, "readOnly": True} in console["volumeMounts"]
    pod = named(FULL, "Deployment", "console-mobkit-console")["spec"]["template"]["spec"]
    config_map = {v["name"]: v for v in pod["volumes"]}["access"]["configMap"]
    assert config_map["items"] == [{"key": file_name, "path": file_name}]
    assert named(FULL, "ConfigMap", config_map["name"])["data"][file_name] == EVERYTHING_ON["access"]["config"]
    assert "MOBKIT_ACCESS_CONFIG" not in container_env(_console(DEFAULTS))


def test_every_secret_is_a_reference_to_an_existing_secret_never_a_value():
    assert objects_of(FULL, "Secret") == []
    env = container_env(_console(FULL))
    references = {name: entry["valueFrom"]["secretKeyRef"] for name, entry in env.items() if "valueFrom" in entry}
    assert set(references) == {
        "DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL", "MOBKIT_INGEST_TOKEN", "MOBKIT_OIDC_CLIENT_SECRET",
        "DJANGO_SUPERUSER_USERNAME", "DJANGO_SUPERUSER_PASSWORD", "DJANGO_SUPERUSER_EMAIL",
    }
    assert references["DATABASE_URL"] == {"name": "mobkit-console", "key": "databaseUrl"}
    assert references["DJANGO_SUPERUSER_PASSWORD"] == {"name": "mobkit-console-admin", "key": "password"}
    # Unnamed secrets are left out, so the console's own defaults apply.
    assert not any("valueFrom" in entry for entry in container_env(_console(DEFAULTS)).values())


def test_follow_replicas_follows_the_configured_sources_into_the_console_state_volume():
    follow = named(FULL, "Deployment", "console-mobkit-console-follow-replicas")
    pod = follow["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["python", "manage.py", "follow_replicas"]
    assert follow["spec"]["replicas"] == 1 and follow["spec"]["strategy"] == {"type": "Recreate"}
    sources = container_env(container)["MOBKIT_REPLICA_SOURCES"]["value"]
    # The value the console's settings parse, the same in both Deployments.
    assert replica_sources_parse(sources) == EVERYTHING_ON["replicaSources"]["sources"]
    assert container_env(_console(FULL))["MOBKIT_REPLICA_SOURCES"]["value"] == sources
    assert container["envFrom"] == [{"secretRef": {"name": "replica-store-credentials"}}]
    console_pod = named(FULL, "Deployment", "console-mobkit-console")["spec"]["template"]["spec"]
    assert {v["name"]: v for v in pod["volumes"]}["state"] == {v["name"]: v for v in console_pod["volumes"]}["state"]


def test_follow_replicas_shares_the_console_node_when_the_state_volume_attaches_to_one_node():
    values = {"replicaSources": {"sources": {"east": "file:///srv/replicas/east"}}}
    follow = named(chart_render(values), "Deployment", "console-mobkit-console-follow-replicas")
    affinity = follow["spec"]["template"]["spec"]["affinity"]["podAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == "console"


def test_the_ingress_hosts_are_the_allowed_hosts_unless_set():
    env = container_env(_console(FULL))
    assert env["DJANGO_ALLOWED_HOSTS"]["value"] == "console.example.com"
    assert env["MOBKIT_BEHIND_PROXY"]["value"] == "1"
    assert container_env(_console(DEFAULTS))["DJANGO_ALLOWED_HOSTS"]["value"] == "localhost,127.0.0.1"


@pytest.mark.parametrize(("values", "said"), [
    ({"workers": 0}, "/workers"),
    ({"replicaCount": -1}, "/replicaCount"),
    ({"securityContext": {"readOnlyRootFilesystem": False}}, "/securityContext/readOnlyRootFilesystem"),
    ({"podSecurityContext": {"runAsNonRoot": False}}, "/podSecurityContext/runAsNonRoot"),
    ({"config": {"logFormat": "xml"}}, "/config/logFormat"),
    ({"replicaSources": {"sources": {"east": "no-scheme"}}}, "/replicaSources/sources/east"),
    ({"replicaSources": {"sources": {"-bad": "file:///x"}}}, "'-bad' does not match"),
    ({"persistence": {"size": "ten gigabytes"}}, "/persistence/size"),
    ({"secrets": {"redisUrl": {"existingSecret": "x", "key": ""}}}, "/secrets/redisUrl/key"),
    ({"imageTag": "typo"}, "imageTag"),
])
def test_the_values_schema_refuses_values_that_cannot_work_naming_them(values, said):
    with helm_python.Chart.load(CHART) as chart, pytest.raises(helm_python.HelmValuesError) as refused:
        chart.validate_schema(values)
    assert said in str(refused.value)


@pytest.mark.parametrize(("values", "said"), [
    ({"workers": 2}, "workers above 1 needs secrets.redisUrl"),
    ({"replicaCount": 2, "secrets": {"redisUrl": {"existingSecret": "r", "key": "url"}}},
     "replicaCount above 1 needs secrets.redisUrl, secrets.databaseUrl (PostgreSQL) and secrets.secretKey"),
    ({"replicaSources": {"sources": {"east": "file:///x"}}, "persistence": {"enabled": False}},
     "replicaSources need persistence.enabled"),
])
def test_a_console_that_could_not_work_is_refused_when_rendered_saying_why(values, said):
    with pytest.raises(helm_python.HelmRenderError) as refused:
        chart_render(values)
    assert said in str(refused.value)


def test_the_values_file_readme_shows_renders_valid_objects():
    readme = (REPO / "README.md").read_text()
    (text,) = re.findall(r"^cat > console-values\.yaml <<'YAML'\n(.*?)^YAML$", readme, re.MULTILINE | re.DOTALL)
    values = yaml.safe_load(text)
    with helm_python.Chart.load(CHART) as chart:
        chart.validate_schema(values)
    manifests = chart_render(values)
    for manifest in manifests:
        kubernetes_validate.validate(manifest, KUBERNETES_VERSIONS[-1], strict=True)
    assert {"Ingress", "ConfigMap"} <= {m["kind"] for m in manifests}
