"""Issue 26: the developers' page shows the API's last refusals of the account's requests
(method, route template, status, error code, time; never a body), each environment apart,
another account's never; the account keeps its latest KEPT."""

from __future__ import annotations

import httpx

from cauri.merchants.api_errors import KEPT
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_member
from tests.support import make_merchant, scalar

API = "/api/v1"
SECRET_NUMBER = "22997654321"


async def test_the_developers_see_their_account_s_refusals_and_nothing_of_the_bodies(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant, other = await make_merchant(runtime), await make_merchant(runtime, name="Autre")
    headers = merchant.headers()
    body = {"amount": -5, "operator": "mtn", "phone_number": SECRET_NUMBER}
    assert (await client.post(f"{API}/payments", json=body, headers=headers)).status_code == 422
    assert (await client.get(f"{API}/payments/CAU404", headers=headers)).status_code == 404
    assert (await client.get(f"{API}/payouts/x", headers=other.headers())).status_code == 404
    unknown = {"Authorization": "Bearer sk_test_nobody"}
    assert (await client.get(f"{API}/payments", headers=unknown)).status_code == 401
    live = await client.get(f"{API}/payments/CAU1", headers=merchant.headers(True))
    assert live.status_code == 404
    assert await scalar(runtime, "SELECT count(*) FROM api_errors") == 4  # not the unknown key's

    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "d@shop.example", "developer")
    )
    page = (await dashboard.get("/dashboard/test/developers")).text
    table = page.split('id="api-errors"', 1)[1].split("</table>", 1)[0]
    assert table.count("<tr>") == 3  # the header's and two rows
    assert "/api/v1/payments/{reference}" in table and "not_found" in table
    assert "/api/v1/payments" in table and "invalid_request" in table and "422" in table
    assert SECRET_NUMBER not in page and "CAU404" not in page and "/payouts/" not in table
    live_table = (await dashboard.get("/dashboard/developers")).text.split('id="api-errors"')[1]
    assert live_table.split("</table>")[0].count("<tr>") == 2


async def test_the_account_keeps_its_latest_refusals(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    for n in range(KEPT + 5):
        answer = await client.get(f"{API}/payments/CAU{n}", headers=merchant.headers())
        assert answer.status_code == 404
    assert await scalar(runtime, "SELECT count(*) FROM api_errors") == KEPT
