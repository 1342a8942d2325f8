"""The client's retry rules (spec: Errors, Retry rules) on answers a real server cannot be
made to give on demand (429, 500, a refused connection): httpx's MockTransport plays them."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from cauri_client import (
    AsyncCauri,
    Cauri,
    CauriError,
    ConnectionFailed,
    InvalidRequest,
    RateLimited,
    RetryPolicy,
    ServerError,
    UnexpectedResponse,
)

Answer = Callable[[httpx.Request], httpx.Response]

BALANCE = {"success": True, "data": []}


def error(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"success": False, "error": {"code": code, "message": "Non."}}
    return httpx.Response(status, json=body, headers=headers)


class Script:
    """Answers in turn, the last one ever after; records each request and each wait."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.waits: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer

    def client(self, retries: RetryPolicy | None = None) -> Cauri:
        return Cauri(
            "sk_test_x",
            base_url="http://cauri.test",
            retries=retries,
            sleep=self.waits.append,
            transport=httpx.MockTransport(self),
        )


def test_429_waits_its_retry_after_then_succeeds() -> None:
    script = Script(
        error(429, "rate_limited", **{"Retry-After": "7"}), httpx.Response(200, json=BALANCE)
    )
    assert script.client().balance.get() == []
    assert script.waits == [7.0]


def test_500_on_a_read_is_retried_with_growing_delays_then_raised() -> None:
    script = Script(error(500, "server_error"))
    with pytest.raises(ServerError) as raised:
        script.client(RetryPolicy(max_attempts=4, initial_delay=0.5)).balance.get()
    assert len(script.requests) == 4 and script.waits == [0.5, 1.0, 2.0]
    assert raised.value.http_status == 500


def test_a_creation_is_retried_on_500_only_with_an_external_id() -> None:
    without = Script(error(500, "server_error"))
    with pytest.raises(ServerError):
        without.client().payouts.create(amount=1000, phone_number="22997000000", operator="mtn")
    assert len(without.requests) == 1

    keyed = Script(error(500, "server_error"))
    with pytest.raises(ServerError):
        keyed.client().payouts.create(
            amount=1000, phone_number="22997000000", operator="mtn", external_id="p-1"
        )
    assert len(keyed.requests) == 3
    assert {request.content for request in keyed.requests} == {keyed.requests[0].content}


def test_429_is_retried_even_for_a_creation_without_external_id() -> None:
    """A 429 is refused before anything is done: sending it again cannot do it twice."""
    script = Script(error(429, "rate_limited"), error(422, "invalid_request"))
    with pytest.raises(InvalidRequest):
        script.client().payments.create(amount=1, operator="mtn", phone_number="22997000000")
    assert len(script.requests) == 2


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, "unauthorized"),
        (403, "merchant_inactive"),
        (404, "not_found"),
        (422, "invalid_request"),
    ],
)
def test_4xx_is_never_retried(status: int, code: str) -> None:
    script = Script(error(status, code))
    with pytest.raises(CauriError) as raised:
        script.client().payments.get("p")
    assert len(script.requests) == 1 and raised.value.code == code


def test_a_retry_after_beyond_the_longest_wait_is_raised_not_waited() -> None:
    script = Script(error(429, "rate_limited", **{"Retry-After": "600"}))
    with pytest.raises(RateLimited) as raised:
        script.client(RetryPolicy(max_delay=30)).balance.get()
    assert raised.value.retry_after == 600 and script.waits == []


def test_a_connection_that_never_opened_is_retried_even_for_a_creation() -> None:
    script = Script(httpx.ConnectError("refused"), error(422, "invalid_request"))
    with pytest.raises(InvalidRequest):
        script.client().payments.create(amount=1, operator="mtn")
    assert len(script.requests) == 2


def test_a_timeout_after_sending_a_creation_without_external_id_is_not_retried() -> None:
    script = Script(httpx.ReadTimeout("slow"))
    with pytest.raises(ConnectionFailed) as raised:
        script.client().payments.create(amount=1, operator="mtn")
    assert len(script.requests) == 1 and raised.value.sent and raised.value.code == "timeout"


def test_an_unknown_code_is_the_base_class_and_an_answer_not_the_apis_is_unexpected() -> None:
    script = Script(error(418, "teapot_protocol"))
    with pytest.raises(CauriError) as raised:
        script.client().balance.get()
    assert type(raised.value) is CauriError and raised.value.code == "teapot_protocol"

    proxy = Script(httpx.Response(502, text="<html>Bad gateway</html>"))
    with pytest.raises(UnexpectedResponse) as bad:
        proxy.client(RetryPolicy(max_attempts=2)).balance.get()
    assert bad.value.http_status == 502 and len(proxy.requests) == 2


async def test_the_async_client_follows_the_same_rules() -> None:
    script = Script(error(500, "server_error"), httpx.Response(200, json=BALANCE))

    async def wait(seconds: float) -> None:
        script.waits.append(seconds)

    async with AsyncCauri(
        "sk_test_x", base_url="http://cauri.test", sleep=wait, transport=httpx.MockTransport(script)
    ) as cauri:
        assert await cauri.balance.get() == []
    assert script.waits == [0.5]
    assert str(script.requests[0].url) == "http://cauri.test/api/v1/balance"
    assert script.requests[0].headers["authorization"] == "Bearer sk_test_x"
