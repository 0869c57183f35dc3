"""Every series a Grafana panel queries is one the gateway exports, after the kinds of traffic that make
each appear: both APIs, streamed and not, errors, retries, prompt-cache writes and reads, response-cache
hits, agent sessions (tool loops, long histories) and a Redis outage.

A panel over a misspelt or missing metric shows "No data" forever and nobody notices: this test is what
notices. Names and equality/regex label matchers are checked against the /metrics text.
"""

from __future__ import annotations

import itertools
import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.error_classes import ERROR_CLASSES
from tests.deploy.histories import RUN_TESTS, openai_tool_turns
from tests.deploy.pool_traffic import POOLS_CONFIG, drive_pool_traffic, pool_models
from tests.deploy.processes import REPO, Spawned, redis_server
from tests.gateway_harness import ADMIN_KEY, TENANT_KEYS, RunningGateway, gateway_settings, running_gateway

DASHBOARDS = REPO / "grafana" / "dashboards"
# Series Prometheus makes itself (not exported by the gateway).
PROMETHEUS_SERIES = {"up"}
# Labels Prometheus adds to every scraped series.
PROMETHEUS_LABELS = {"instance", "job"}
# Counters that only move when a stage breaks, which no honest traffic can cause: for these, the family
# must be declared on /metrics, a sample is not required.
EVENT_ONLY = {
    "cachegate_stage_failures_total",
    "cachegate_compaction_failures_total",
    "cachegate_prompt_cache_failures_total",
    "cachegate_response_cache_errors_total",
    "cachegate_request_records_dropped_total",
}
# A selector: a metric name with its optional {label matchers}.
SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?\s*(?:\[|\)|$|\s|[*/+-])")
MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
LONG_TEXT = " ".join(f"Rule {i}: answer precisely and cite section {i} of the handbook." for i in range(300))
EMBEDDER_LOAD_TIMEOUT_S = 120.0  # a failure bound: the model loads in seconds on an idle machine
# Prompt pairs that mean other things, yet score 0.993 with all-MiniLM-L6-v2 (default threshold: 0.98).
NEAR_DUPLICATES = [
    ("Is it safe to eat raw eggs?", "Is it not safe to eat raw eggs?"),
    ("Is it safe to swim in the sea at night?", "Is it not safe to swim in the sea at night?"),
]
SMALL_WINDOW = 3000  # tokens: long agent histories are over it, so compaction and summaries happen


@dataclass(frozen=True)
class Selector:
    dashboard: str
    panel: str
    name: str
    matchers: tuple[tuple[str, str, str], ...]

    def __str__(self) -> str:
        labels = ",".join(f'{label}{op}"{value}"' for label, op, value in self.matchers)
        return f"{self.name}{{{labels}}}" if labels else self.name


@dataclass
class Exported:
    samples: dict[str, list[dict[str, str]]]  # sample name -> label sets
    families: set[str]  # declared sample names (counters: with _total), samples or not

    @classmethod
    def parse(cls, text: str) -> Exported:
        samples: dict[str, list[dict[str, str]]] = {}
        families: set[str] = set()
        for family in text_string_to_metric_families(text):
            families.add(family.name + ("_total" if family.type == "counter" else ""))
            for sample in family.samples:
                samples.setdefault(sample.name, []).append(dict(sample.labels))
        return cls(samples, families)

    def label_names(self, name: str) -> set[str]:
        return {label for labels in self.samples.get(name, []) for label in labels}

    def has(self, selector: Selector) -> bool:
        if selector.name in EVENT_ONLY and selector.name in self.families:
            return True
        return any(
            all(matches(labels.get(label, ""), op, value) for label, op, value in selector.matchers)
            for labels in self.samples.get(selector.name, [])
        )


def matches(actual: str, op: str, expected: str) -> bool:
    # A dashboard variable ($tenant, ${key}) at "All" matches anything (its allValue is ".*").
    expected = re.sub(r"\$\{?\w+\}?", ".*", expected) if op in ("=~", "!~") else expected
    if op == "=":
        return actual == expected
    if op == "!=":
        return actual != expected
    found = re.fullmatch(expected, actual) is not None
    return found if op == "=~" else not found


FUNCTIONS_AND_KEYWORDS = {
    "sum",
    "rate",
    "increase",
    "histogram_quantile",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "avg",
    "max",
    "min",
    "count",
    "delta",
    "deriv",
    "irate",
    "topk",
    "bottomk",
    "abs",
    "clamp_min",
    "clamp_max",
    "and",
    "or",
    "unless",
    "offset",
    "le",
    "vector",
    "sort_desc",
}


def selectors_of(dashboard: str, panel: str, expr: str) -> list[Selector]:
    """Metric selectors in a PromQL expression (Grafana variables and grouping clauses left out)."""
    expr = re.sub(r"\[[^\]]*\]", "[]", expr)  # ranges, $__rate_interval included
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", expr)
    found = []
    for name, labels in SELECTOR.findall(expr + " "):
        if name in FUNCTIONS_AND_KEYWORDS or name.startswith("$"):
            continue
        matchers = tuple(MATCHER.findall(labels or ""))
        found.append(Selector(dashboard, panel, name, tuple(m for m in matchers if "$" not in m[2])))
    return found


def grouping_labels(expr: str) -> set[str]:
    """Labels an expression groups by: each must exist on the series it groups, or the legend is empty."""
    clauses = re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr)
    return {label.strip() for clause in clauses for label in clause.split(",") if label.strip()}


def dashboard_selectors() -> list[Selector]:
    selectors = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                selectors += selectors_of(path.stem, panel["title"], target["expr"])
    return selectors


def test_selector_extraction() -> None:
    expr = (
        "histogram_quantile(0.99, sum by (le, provider) (rate(cachegate_upstream_seconds_bucket"
        '{provider="openai",path=~"lean|litellm"}[$__rate_interval]))) / sum(up{job="cachegate"}) * 60'
    )
    assert [str(s) for s in selectors_of("d", "p", expr)] == [
        'cachegate_upstream_seconds_bucket{provider="openai",path=~"lean|litellm"}',
        'up{job="cachegate"}',
    ]


def test_every_panel_queries_something() -> None:
    for path in sorted(DASHBOARDS.glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            if panel["type"] == "row":
                continue
            assert panel["targets"], f"{path.stem}: {panel['title']} has no query"
            for target in panel["targets"]:
                assert selectors_of(path.stem, panel["title"], target["expr"]), target["expr"]


def test_dashboards_have_unique_uids_and_panels_do_not_overlap() -> None:
    dashboards = [json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))]
    assert len({d["uid"] for d in dashboards}) == len(dashboards)
    for dashboard in dashboards:
        cells: set[tuple[int, int]] = set()
        for panel in dashboard["panels"]:
            grid = panel["gridPos"]
            assert grid["x"] + grid["w"] <= 24, panel["title"]
            area = {
                (x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])
            }
            assert not area & cells, f"{dashboard['title']}: {panel['title']} overlaps another panel"
            cells |= area


# -- traffic -----------------------------------------------------------------------------------------------


def drive_core_traffic(gw: RunningGateway) -> None:
    session = {"x-session-id": f"dash-{uuid.uuid4().hex[:8]}"}
    oai, claude = gw.openai(), gw.anthropic("globex")
    oai.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], extra_headers=session
    )
    list(
        oai.chat.completions.create(
            model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "[[sim:text one two three]]"}]
        )
    )
    claude.messages.create(model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    with claude.messages.stream(
        model="claude-sonnet-4-5", max_tokens=16, messages=[{"role": "user", "content": "[[sim:text streamed]]"}]
    ) as stream:
        stream.until_done()
    # Errors: an unknown model (404) and a bad key (401).
    httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "no-such-model", "messages": [{"role": "user", "content": "x"}]},
    )
    httpx.post(
        f"{gw.url}/v1/messages",
        headers={"x-api-key": "sk-wrong"},
        json={"model": "claude-sonnet-4-5", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
    )
    # A provider failure: every try answers 500 (the route retries twice), the caller gets a 502.
    gw.queue_faults("500", "500", "500", model="gpt-4o-mini")
    failed = httpx.post(
        f"{gw.url}/v1/chat/completions",
        headers={"authorization": f"Bearer {TENANT_KEYS['acme']}"},
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "[[sim:text fails]]"}]},
    )
    assert failed.status_code == 502, failed.text
    # A retry: the provider answers 429 once.
    gw.queue_faults("429", model="gpt-4o-mini")
    oai.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "[[sim:text retried]]"}])


def drive_cache_traffic(gw: RunningGateway) -> None:
    oai, claude = gw.openai(), gw.anthropic()
    # Provider prompt cache: an Anthropic write then read (write premium, savings), OpenAI automatic reads.
    system: Any = [{"type": "text", "text": LONG_TEXT, "cache_control": {"type": "ephemeral"}}]
    for question in ("first question", "second question"):
        claude.messages.create(
            model="claude-sonnet-4-5", max_tokens=16, system=system, messages=[{"role": "user", "content": question}]
        )
        oai.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "system", "content": LONG_TEXT}, {"role": "user", "content": question}],
        )
    # A session whose system prompt carries a timestamp that changes: volatile content, a prefix break.
    session = {"x-session-id": f"volatile-{uuid.uuid4().hex[:8]}"}
    for minute in ("10:01:07", "10:02:31"):
        claude.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=16,
            extra_headers=session,
            system=f"Now: 2026-11-22 {minute} UTC. {LONG_TEXT}",
            messages=[{"role": "user", "content": "status?"}],
        )
    # A session whose system prompt is rewritten every turn: the optimizer stops placing marks.
    session = {"x-session-id": f"unstable-{uuid.uuid4().hex[:8]}"}
    for persona in range(4):
        claude.messages.create(
            model="claude-sonnet-4-5",
            max_tokens=16,
            extra_headers=session,
            system=f"You are persona number {persona}. {LONG_TEXT}",
            messages=[{"role": "user", "content": "status?"}],
        )


def ask(gw: RunningGateway, prompt: str, headers: dict[str, str] | None = None) -> str:
    """One temperature-0 question (eligible for both response-cache tiers); returns the tier that answered."""
    raw = gw.openai().chat.completions.with_raw_response.create(
        model="gpt-4o-mini", temperature=0, messages=[{"role": "user", "content": prompt}], extra_headers=headers
    )
    return raw.headers["x-cachegate-cache"]


def start_response_cache_traffic(gw: RunningGateway) -> None:
    """An exact hit. The first eligible request also starts loading the embedding model in the background
    (seconds), so this runs first and the semantic part last."""
    assert ask(gw, "What is the capital of France?") == "miss"
    assert ask(gw, "What is the capital of France?") == "exact"


def finish_response_cache_traffic(gw: RunningGateway) -> None:
    """A semantic hit, once the model has loaded, asked again without the cache; and near-duplicates the
    verifier refuses."""
    deadline = time.monotonic() + EMBEDDER_LOAD_TIMEOUT_S
    # Each try is a new exact key (one more "?"), so only the semantic tier can answer it.
    for marks in itertools.count(1):
        question = "What's the capital of France" + "?" * marks
        if ask(gw, question) == "semantic":
            ask(gw, question, {"cache-control": "no-cache"})
            break
        assert time.monotonic() < deadline, "no semantic hit: did the embedding model load?"
        time.sleep(0.2)
    for cached, near_duplicate in NEAR_DUPLICATES:
        ask(gw, cached)
        assert ask(gw, near_duplicate) == "miss", near_duplicate


def drive_agent_traffic(gw: RunningGateway) -> None:
    """Agent sessions: a tool loop (guard), chanting, the terminate tool, long histories (compaction)."""
    oai = gw.openai()
    # A loop: the same tool call with the same result, turn after turn, until the guard blocks the session
    # (on the way: a nudge, then a stop).
    loop = {"x-session-id": f"loop-{uuid.uuid4().hex[:8]}"}
    for turns in range(1, 16):
        try:
            oai.chat.completions.create(
                model="small-window",
                tools=RUN_TESTS,
                extra_headers=loop,
                messages=openai_tool_turns(turns, "1 failed: test_login"),
            )
        except openai.BadRequestError:
            break
    # A model that chants in a stream (the guard cuts it), and one that ends its session itself.
    chant = {"x-session-id": f"chant-{uuid.uuid4().hex[:8]}"}
    list(
        oai.chat.completions.create(
            model="gpt-4o-mini",
            stream=True,
            extra_headers=chant,
            messages=[{"role": "user", "content": "[[sim:chant 40]]"}],
        )
    )
    done = {"x-session-id": f"done-{uuid.uuid4().hex[:8]}"}
    oai.chat.completions.create(
        model="gpt-4o-mini",
        tools=RUN_TESTS,
        extra_headers=done,
        messages=[{"role": "user", "content": '[[sim:tool terminate {"status": "success", "reason": "tests pass"}]]'}],
    )
    # A long history of large tool results (compaction), then one of long text turns (summary).
    long = {"x-session-id": f"long-{uuid.uuid4().hex[:8]}"}
    big_result = "FAILED test_login: " + " ".join(f"line {i} of the traceback" for i in range(120))
    oai.chat.completions.create(
        model="small-window", tools=RUN_TESTS, extra_headers=long, messages=openai_tool_turns(8, big_result)
    )
    chatty = {"x-session-id": f"chatty-{uuid.uuid4().hex[:8]}"}
    history: list[Any] = []
    for i in range(12):
        history += [
            {"role": "user", "content": f"Step {i}: " + LONG_TEXT[:900]},
            {"role": "assistant", "content": f"Done with step {i}. " + LONG_TEXT[:900]},
        ]
    history.append({"role": "user", "content": "What next?"})
    oai.chat.completions.create(model="small-window", extra_headers=chatty, messages=history)
    # A single message larger than the window: nothing to compact, still over it.
    oai.chat.completions.create(model="small-window", messages=[{"role": "user", "content": LONG_TEXT * 2}])


def drive_redis_outage(gw: RunningGateway, redis_process: Spawned) -> None:
    """Redis dies: the state store falls back to memory, and an agent session carries on, degraded."""
    redis_process.kill()
    response = httpx.get(
        f"{gw.url}/admin/state/stats", params={"prefix": "acme:"}, headers={"authorization": f"Bearer {ADMIN_KEY}"}
    )
    assert response.json()["backend"] == "memory (fallback)"
    gw.openai().chat.completions.create(
        model="gpt-4o-mini",
        extra_headers={"x-session-id": "after-outage"},
        messages=[{"role": "user", "content": "still there?"}],
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, pool_sims: dict[str, str]) -> Iterator[Exported]:
    logs = tmp_path_factory.mktemp("dashboards")
    settings = gateway_settings()
    settings["models"] = [
        *settings["models"],
        {
            "name": "small-window",
            "provider": "openai",
            "model": "gpt-4o-mini",
            "api_base": "embedded-sim",
            "context_window": SMALL_WINDOW,
        },
        *pool_models(pool_sims),  # a pool of two simulated deployments (the pools dashboard)
    ]
    # A budget (never reached) so the spend-against-budget series appear.
    budget = {"budgets": [{"window": "month", "usd": 1000}]}
    settings["tenants"] = [{**t, "limits": budget} if t["name"] == "acme" else t for t in settings["tenants"]]
    # Generous timeouts: on a loaded machine a slow Redis reply or embedding must not look like an outage.
    settings.update(
        redis_timeout_s=2.0,
        pools=POOLS_CONFIG,
        policy={
            "response_cache": {"embed_timeout_s": 10.0},
            "guard": {"terminate_tool": True},  # opt-in; on here so its series appears
        },
    )
    with redis_server(logs) as (redis_process, redis_url), running_gateway(**settings, redis_url=redis_url) as gw:
        start_response_cache_traffic(gw)
        drive_core_traffic(gw)
        drive_cache_traffic(gw)
        drive_agent_traffic(gw)
        drive_pool_traffic(gw, pool_sims)
        finish_response_cache_traffic(gw)
        drive_redis_outage(gw, redis_process)
        yield Exported.parse(gw.metrics())


def test_every_grouping_label_is_on_the_series_it_groups(exported: Exported) -> None:
    wrong = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                selectors = selectors_of(path.stem, panel["title"], target["expr"])
                if any(s.name in EVENT_ONLY for s in selectors):
                    continue  # no samples, so no labels to check against
                known = {label for s in selectors for label in exported.label_names(s.name)}
                known |= PROMETHEUS_LABELS
                wrong += [
                    f"{path.stem}: {panel['title']}: by {label}"
                    for label in sorted(grouping_labels(target["expr"]) - known)
                ]
    assert not wrong, "grouping by labels the series do not have:\n  " + "\n  ".join(wrong)


def test_every_dashboard_series_is_exported(exported: Exported) -> None:
    selectors = dashboard_selectors()
    assert {s.dashboard for s in selectors} == {"overview", "cost", "cache", "agents", "pools"}
    missing = sorted(
        {
            f"{s} ({s.dashboard}: {s.panel})"
            for s in selectors
            if s.name not in PROMETHEUS_SERIES and not exported.has(s)
        }
    )
    assert not missing, "panels query series the gateway does not export:\n  " + "\n  ".join(missing)


def test_every_dashboard_variable_lists_an_exported_label(exported: Exported) -> None:
    """A variable (`label_values(metric, label)`) over a label the metric lacks would offer nothing to pick."""
    checked = 0
    for path in sorted(DASHBOARDS.glob("*.json")):
        for variable in json.loads(path.read_text())["templating"]["list"]:
            metric, label = re.fullmatch(r"label_values\((\w+),\s*(\w+)\)", variable["definition"]).groups()  # type: ignore[union-attr]
            assert label in exported.label_names(metric), (path.name, variable["name"])
            checked += 1
    assert checked >= 2


def test_errors_savings_and_key_spend_are_counters_with_bounded_labels(exported: Exported) -> None:
    """Errors by class (intended refusals apart from failures); savings and spend by key as counters, so
    Grafana's increase over a range survives restarts; the key label is an id, never the secret."""
    classes = {labels["error_class"] for labels in exported.samples["cachegate_request_errors_total"]}
    assert {"guard", "client", "provider"} <= classes <= set(ERROR_CLASSES)
    sources = {labels["source"] for labels in exported.samples["cachegate_saved_usd_total"]}
    assert {"prompt_cache", "response_cache"} <= sources and "cachegate_saved_usd" not in exported.samples
    keys = {labels["key"] for labels in exported.samples["cachegate_key_cost_usd_total"]}
    assert keys and all(key.startswith("cfg-") for key in keys), keys
