"""deploy/kubernetes: each overlay renders with `kubectl kustomize`, every object validates against the
Kubernetes schemas (strict: an unknown or misspelt field fails), and the objects agree with each other and
with the gateway: probes on its real health paths, requests sized to a worker's measured memory, secrets
only from Secret objects, an autoscaler, a disruption budget and a scrape job that select the gateway's pods.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import PurePosixPath
from typing import Any

import httpx
import kubernetes_validate
import pytest
import yaml

from gateway.config import load_settings
from tests.deploy.processes import REPO
from tests.gateway_harness import running_gateway

KUSTOMIZE = REPO / "deploy" / "kubernetes"
OVERLAYS = ["production", "in-cluster"]
# The oldest Kubernetes release still in support when this was written, and the newest the schemas know.
SCHEMA_VERSIONS = ["1.32.0", kubernetes_validate.latest_version()]
# Resident memory of one worker after warm-up with the embedding model loaded (bench/worker_memory.py;
# docs/deployment.md, "Kubernetes"), in MiB.
WORKER_RSS_MIB = 850
SECRET_ENV = {"REDIS_URL", "CACHEGATE_LEDGER__URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}


def render(overlay: str) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "the Kubernetes manifest tests need kubectl (its `kustomize` renders the overlays)"
    result = subprocess.run(
        [kubectl, "kustomize", str(KUSTOMIZE / "overlays" / overlay)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> tuple[str, list[dict[str, Any]]]:
    return request.param, render(request.param)


def one(objects: list[dict[str, Any]], kind: str, name: str = "cachegate") -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def gateway_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    return container


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def pod_labels(objects: list[dict[str, Any]]) -> dict[str, str]:
    labels: dict[str, str] = one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    return labels


def mebibytes(quantity: str) -> float:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    return float(quantity[:-2]) * units[quantity[-2:]]


@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_every_object_validates_against_the_kubernetes_schemas(
    rendered: tuple[str, list[dict[str, Any]]], version: str
) -> None:
    overlay, objects = rendered
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)
    assert {o["metadata"].get("namespace") for o in objects if o["kind"] != "Namespace"} == {
        one(objects, "Namespace", next(o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"))["metadata"][
            "name"
        ]
    }, overlay


def test_strict_validation_refuses_a_misspelt_field() -> None:
    """The check above would pass anything if the validator were lax: a typo in a probe must fail."""
    deployment = one(render("production"), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["paht"] = "/readyz"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, SCHEMA_VERSIONS[0], strict=True)


def test_the_gateway_runs_its_config_on_its_port_with_probes_on_its_health_paths(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    _, objects = rendered
    settings = load_settings(REPO / "deploy" / "cachegate.yaml")
    container = gateway_container(objects)
    args = container["args"]
    config_path = PurePosixPath(args[args.index("--config") + 1])
    assert args[:2] == ["cachegate", "serve"] and args[args.index("--host") + 1] == "0.0.0.0"
    assert int(args[args.index("--workers") + 1]) >= 1, "--workers: a pod's share, not the node's cores"
    assert container["ports"] == [{"name": "http", "containerPort": settings.port}]
    mount = next(m for m in container["volumeMounts"] if PurePosixPath(m["mountPath"]) == config_path.parent)
    volume = next(
        v for v in one(objects, "Deployment")["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]
    )
    assert volume["secret"]["items"] == [{"key": config_path.name, "path": config_path.name}]
    probes = {kind: container[f"{kind}Probe"]["httpGet"] for kind in ("startup", "liveness", "readiness")}
    assert {kind: probe["path"] for kind, probe in probes.items()} == {
        "startup": "/healthz",
        "liveness": "/healthz",
        "readiness": "/readyz",
    }
    assert all(probe["port"] == "http" for probe in probes.values())


def test_the_probe_paths_answer_on_a_real_gateway() -> None:
    with running_gateway() as gateway:
        for path in ("/healthz", "/readyz"):
            assert httpx.get(f"{gateway.url}{path}").status_code == 200, path


def test_memory_requests_hold_every_worker(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _, objects = rendered
    container = gateway_container(objects)
    workers = int(container["args"][container["args"].index("--workers") + 1])
    resources = container["resources"]
    requested = mebibytes(resources["requests"]["memory"])
    assert requested >= workers * WORKER_RSS_MIB, f"{workers} workers of {WORKER_RSS_MIB} MiB in {requested} MiB"
    assert mebibytes(resources["limits"]["memory"]) > requested
    assert resources["requests"]["cpu"], "the autoscaler's utilization is relative to the CPU request"
    assert str(WORKER_RSS_MIB) in (REPO / "docs" / "deployment.md").read_text(), "the measured number is documented"


def test_secrets_come_from_secret_objects_only(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _, objects = rendered
    assert not [o for o in objects if o["kind"] == "Secret"], "no secret is committed: the cluster holds them"
    env = {e["name"]: e for e in gateway_container(objects)["env"]}
    assert set(env) >= SECRET_ENV
    for name in SECRET_ENV:
        assert "value" not in env[name] and env[name]["valueFrom"]["secretKeyRef"]["name"] == "cachegate-secrets"
    text = yaml.safe_dump_all(objects)
    assert "sk-" not in text and "sha256:" not in text


def test_autoscaler_disruption_budget_and_service_select_the_gateway(
    rendered: tuple[str, list[dict[str, Any]]],
) -> None:
    overlay, objects = rendered
    labels = pod_labels(objects)
    hpa = one(objects, "HorizontalPodAutoscaler")["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "cachegate"}
    assert hpa["minReplicas"] >= (3 if overlay == "production" else 1) and hpa["maxReplicas"] > hpa["minReplicas"]
    pdb = one(objects, "PodDisruptionBudget")["spec"]
    assert selects(pdb["selector"]["matchLabels"], labels) and pdb["maxUnavailable"] == 1
    service = one(objects, "Service")["spec"]
    assert selects(service["selector"], labels) and service["ports"][0]["targetPort"] == "http"
    strategy = one(objects, "Deployment")["spec"]["strategy"]["rollingUpdate"]
    assert strategy["maxUnavailable"] == 0, "a rollout must not take serving pods away first"
    for obj in objects:
        if obj["kind"] in ("Service", "PodDisruptionBudget") and obj["metadata"]["name"] != "cachegate":
            selector = obj["spec"].get("selector", {})
            assert not selects(selector.get("matchLabels", selector), labels), f"{obj['metadata']['name']}"


def test_prometheus_scrape_job_keeps_the_gateway_pods_with_a_token(rendered: tuple[str, list[dict[str, Any]]]) -> None:
    _, objects = rendered
    scrape = yaml.safe_load(one(objects, "ConfigMap", "cachegate-prometheus")["data"]["cachegate-scrape.yml"])
    job = scrape["scrape_configs"][0]
    assert job["metrics_path"] == "/metrics" and job["authorization"]["credentials_file"]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}]
    keep = {
        tuple(rule["source_labels"]): rule["regex"] for rule in job["relabel_configs"] if rule.get("action") == "keep"
    }
    labels = pod_labels(objects)
    pod_label = "__meta_kubernetes_pod_label_"
    names = ("app.kubernetes.io/name", "app.kubernetes.io/component")
    sources = tuple(pod_label + name.replace(".", "_").replace("/", "_") for name in names)
    assert keep[sources] == ";".join(labels[name] for name in names)
    assert keep[("__meta_kubernetes_pod_container_port_name",)] == "http"


def test_redis_and_postgres_external_in_production_in_the_cluster_otherwise() -> None:
    production = render("production")
    assert {o["kind"] for o in production} == {
        "Namespace",
        "ServiceAccount",
        "ConfigMap",
        "Service",
        "Deployment",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    }
    in_cluster = render("in-cluster")
    gateway = pod_labels(in_cluster)
    for name, port in (("redis", 6379), ("postgres", 5432)):
        assert one(in_cluster, "Service", name)["spec"]["ports"][0]["port"] == port
        policy = next(
            o
            for o in in_cluster
            if o["kind"] == "NetworkPolicy"
            and o["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/name"] == name
        )["spec"]
        [rule] = policy["ingress"]
        assert [selects(peer["podSelector"]["matchLabels"], gateway) for peer in rule["from"]] == [True]
        assert rule["ports"] == [{"port": port}]
    postgres = one(in_cluster, "StatefulSet", "postgres")["spec"]["template"]["spec"]["containers"][0]
    password = next(e for e in postgres["env"] if e["name"] == "POSTGRES_PASSWORD")
    assert password["valueFrom"]["secretKeyRef"]["name"] == "cachegate-secrets"
