"""Issue 12, operability: every counted response says the client's budget (X-RateLimit-Limit,
-Remaining, -Reset in seconds), successes, errors and the 429 alike; the 429 also has
Retry-After, the same delay."""

from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from tests.foundation.builders import API, app_with, client_of
from tests.support import assert_error, make_merchant, momo_body


def budget(response: httpx.Response) -> tuple[int, int, int]:
    headers = response.headers
    return (
        int(headers["x-ratelimit-limit"]),
        int(headers["x-ratelimit-remaining"]),
        int(headers["x-ratelimit-reset"]),
    )


async def test_every_answer_says_the_budget_left(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with client_of(app_with(runtime, rate_limit="6/minute")) as client:
        answers = [
            await client.get(f"{API}/payment-modes", headers=merchant.headers()),
            await client.post(f"{API}/payments", json=momo_body(), headers=merchant.headers()),
            await client.get(f"{API}/payments"),  # 401: no key
            await client.post(f"{API}/payments", json={}, headers=merchant.headers()),  # 422
            await client.get(f"{API}/payments/pay_nothing", headers=merchant.headers()),  # 404
            await client.get(f"{API}/nothing-here"),  # 404: no such route
            await client.get(f"{API}/payment-modes", headers=merchant.headers()),  # 429
        ]
    assert [a.status_code for a in answers] == [200, 201, 401, 422, 404, 404, 429]
    budgets = [budget(answer) for answer in answers]
    assert [limit for limit, _, _ in budgets] == [6] * 7
    assert [remaining for _, remaining, _ in budgets] == [5, 4, 3, 2, 1, 0, 0]
    # Seconds until the first request counted leaves the minute's window.
    assert all(0 < reset <= 60 for _, _, reset in budgets)
    refused = answers[-1]
    assert_error(refused, 429, "rate_limited")
    assert int(refused.headers["retry-after"]) == budgets[-1][2]


async def test_operators_notifications_say_their_own_budget(runtime: Runtime) -> None:
    app = app_with(runtime, rate_limit="5/minute", callback_rate_limit="50/minute")
    async with client_of(app) as client:
        notified = await client.post(f"{API}/operator-callbacks/nobody", content=b"{}")
        merchant_side = await client.get(f"{API}/payments")
    assert budget(notified)[:2] == (50, 49)
    assert budget(merchant_side)[:2] == (5, 4)
