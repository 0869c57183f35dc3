"""A stage that fails with request content in its exception logs where it failed, never that content."""

from __future__ import annotations

import logging

import pytest

from gateway.context import RequestContext
from gateway.stages.base import Stage
from tests.gateway_harness import running_gateway

SECRET = "patient-record-4471-confidential"
CLIENT_LOGGERS = {"openai", "httpx", "httpcore"}  # the test's own SDK client logs what it sends


class EchoingStage(Stage):
    """Fails the way careless code does: the exception message quotes the request."""

    name = "echoing"

    async def on_request(self, ctx: RequestContext) -> None:
        raise ValueError(f"could not handle {ctx.body['messages']}")


def test_failed_stage_logs_no_content(caplog: pytest.LogCaptureFixture) -> None:
    with running_gateway() as gw:
        assert gw.services.pipeline is not None
        gw.services.pipeline.request_stages.insert(4, EchoingStage())
        with caplog.at_level(logging.DEBUG):
            reply = gw.openai().chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": SECRET}]
            )
    assert reply.choices[0].message.content  # the stage failed open: the request went on
    failures = [r for r in caplog.records if "stage echoing failed" in r.getMessage()]
    assert failures and "ValueError" in failures[0].getMessage()
    assert "test_log_hygiene.py" in failures[0].getMessage()  # where it failed
    for record in caplog.records:
        if record.name.split(".")[0] in CLIENT_LOGGERS:
            continue
        assert SECRET not in record.getMessage()
        assert record.exc_info is None or SECRET not in str(record.exc_info[1])
