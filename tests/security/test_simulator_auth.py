"""The provider simulator's controls need the admin key (issue #11, item 2): /sim/stats, /sim/requests,
/sim/reset and /sim/faults answer 401 without it and do nothing, with no admin key configured nobody may
use them (403), and the request log is off unless asked for. Its provider endpoints take any key.

Real parts: the gateway with the simulator mounted (tests/gateway_harness.py), the standalone simulator app
and the `cachegate sim` command on loopback ports, the official SDKs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import openai
import pytest

from gateway.config import Settings
from gateway.sim import SimSettings, create_sim_app
from tests.deploy.processes import answers_http, cachegate, spawned
from tests.gateway_harness import ADMIN_HEADERS, TENANT_KEYS, RunningGateway, running_gateway
from tests.ports import spawn_port
from tests.servers import run_app_in_thread

CONTROLS = [("GET", "/sim/stats"), ("GET", "/sim/requests"), ("POST", "/sim/reset"), ("POST", "/sim/faults")]
NOT_ADMIN = [
    {},
    {"authorization": f"Bearer {TENANT_KEYS['acme']}"},
    {"x-api-key": TENANT_KEYS["globex"]},
    {"authorization": "Bearer sk-guess"},
]


@pytest.fixture(scope="module")
def gw() -> Iterator[RunningGateway]:
    with running_gateway() as gateway:
        yield gateway


def hello() -> list[dict[str, str]]:
    """A fresh prompt, so that the response cache never answers in the provider's place."""
    return [{"role": "user", "content": f"hello {uuid.uuid4().hex}"}]


def control(base: str, method: str, path: str, headers: dict[str, str]) -> httpx.Response:
    body = {"faults": ["500"]} if path == "/sim/faults" else None
    return httpx.request(method, f"{base}{path}", json=body, headers=headers)


@pytest.mark.parametrize(("method", "path"), CONTROLS)
def test_controls_need_the_admin_key(gw: RunningGateway, method: str, path: str) -> None:
    for headers in NOT_ADMIN:
        response = control(gw.sim_url, method, path, headers)
        assert response.status_code == 401, (path, headers, response.text)
    gw.reset_sim()  # the one authorised fault below must not fail anyone's next call


def test_a_fault_queued_without_the_key_fails_nobody(gw: RunningGateway) -> None:
    gw.reset_sim()
    for headers in NOT_ADMIN:
        body = {"faults": ["500", "500", "500"], "model": "gpt-4o-mini"}
        assert httpx.post(f"{gw.sim_url}/sim/faults", json=body, headers=headers).status_code == 401
    for tenant in TENANT_KEYS:
        reply = gw.openai(tenant).chat.completions.create(model="gpt-4o-mini", messages=hello())
        assert reply.choices[0].message.content
    assert not any(name.startswith("fault_") for name in gw.sim_stats()["totals"])


def test_the_admin_key_still_queues_faults(gw: RunningGateway) -> None:
    gw.reset_sim()
    gw.queue_faults("500", "500", "500", model="gpt-4o-mini")
    with pytest.raises(openai.InternalServerError):
        gw.openai().chat.completions.create(model="gpt-4o-mini", messages=hello())
    gw.reset_sim()


def test_reset_without_the_key_forgets_nothing(gw: RunningGateway) -> None:
    gw.reset_sim()
    gw.openai().chat.completions.create(model="gpt-4o-mini", messages=hello())
    before = gw.sim_stats()["totals"]["requests"]
    assert httpx.post(f"{gw.sim_url}/sim/reset").status_code == 401
    assert gw.sim_stats()["totals"]["requests"] == before >= 1


def test_other_tenants_requests_are_not_readable_without_the_key(gw: RunningGateway) -> None:
    secret = f"globex secret {uuid.uuid4().hex}"
    gw.openai("globex").chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": secret}])
    for headers in NOT_ADMIN:
        response = httpx.get(f"{gw.sim_url}/sim/requests", params={"limit": 200}, headers=headers)
        assert response.status_code == 401 and secret not in response.text
    assert secret in str(gw.sim_requests(limit=200))  # the harness turned the log on: the admin reads it


def test_the_request_log_is_off_unless_asked_for() -> None:
    assert Settings().simulator_record_requests is False and SimSettings().record_requests is False
    with running_gateway(simulator_record_requests=False) as gateway:
        secret = f"acme secret {uuid.uuid4().hex}"
        gateway.openai().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": secret}])
        assert gateway.sim_stats()["totals"]["requests"] == 1  # it reached the provider
        assert gateway.sim_requests(limit=200) == []


def test_provider_endpoints_accept_any_key(gw: RunningGateway) -> None:
    """The gateway sends its configured provider key, whatever it is: the simulator behaves like a provider."""
    client = openai.OpenAI(base_url=f"{gw.sim_url}/v1", api_key="sk-any-provider-key", max_retries=0)
    assert client.chat.completions.create(model="gpt-4o-mini", messages=hello()).choices[0].message.content


def test_without_an_admin_key_the_controls_are_closed_to_everyone() -> None:
    with run_app_in_thread(create_sim_app(SimSettings())) as url:
        for method, path in CONTROLS:
            for headers in [*NOT_ADMIN, ADMIN_HEADERS]:
                response = control(url, method, path, headers)
                assert response.status_code == 403, (path, headers, response.text)
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="sk-whatever", max_retries=0)
        assert client.chat.completions.create(model="gpt-4o-mini", messages=hello()).choices[0].message.content


def test_cachegate_sim_takes_its_admin_key_from_a_flag(tmp_path_factory: pytest.TempPathFactory) -> None:
    port = spawn_port()
    url = f"http://127.0.0.1:{port}"
    argv = cachegate("sim", "--port", str(port), "--admin-key", "sk-sim-admin-flag")
    with spawned("sim", argv, tmp_path_factory.mktemp("sim")) as process:
        process.wait_until(answers_http(f"{url}/healthz"))
        assert httpx.get(f"{url}/sim/stats").status_code == 401
        assert httpx.post(f"{url}/sim/reset", headers={"x-api-key": "sk-other"}).status_code == 401
        assert httpx.get(f"{url}/sim/stats", headers={"authorization": "Bearer sk-sim-admin-flag"}).status_code == 200
