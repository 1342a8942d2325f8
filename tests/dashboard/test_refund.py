"""Issue 26: a payment refunded from its page on the dashboard, with the API's rules, by the
roles that move money; audited with the member as its actor; refused without the form's
token, for a viewer, past what remains, and live while the merchant is not active."""

from __future__ import annotations

import re

import httpx

from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_member
from tests.foundation.builders import open_live_mode
from tests.staff.traffic import pay
from tests.support import MerchantKeys, make_merchant, scalar

API = "/api/v1"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def _paid(
    client: httpx.AsyncClient, runtime: Runtime, *, live: bool = False
) -> tuple[MerchantKeys, str]:
    open_live_mode(runtime)
    merchant = await make_merchant(runtime)
    payment = await pay(client, merchant, live=live, amount=1000, external_id="order-1")
    return merchant, payment["reference"]


async def _refund(dashboard: ConsoleClient, page: str, **fields: str) -> httpx.Response:
    shown = await dashboard.get(page)
    found = _CSRF.search(shown.text.split('id="refund"', 1)[-1])
    assert found is not None, shown.text
    return await dashboard.post(f"{page}/refund", {"csrf": found.group(1), **fields})


async def test_finance_refunds_part_of_a_payment_from_its_page(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant, reference = await _paid(client, runtime)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "fin@shop.example", "finance")
    )
    page = f"/dashboard/test/payments/{reference}"
    answer = await _refund(dashboard, page, amount="400", reason="Article retourné")
    assert answer.status_code == 303 and answer.headers["location"] == f"{page}?fait=rembourse"
    shown = await dashboard.get(answer.headers["location"])
    assert 'id="action-done"' in shown.text and "Article retourné" in shown.text
    read = await client.get(f"{API}/payments/{reference}", headers=merchant.headers())
    assert read.json()["data"]["amount_refunded"] == 400
    entry = "SELECT actor_kind || ' ' || actor_name FROM audit_log WHERE action = 'payment.refund'"
    assert await scalar(runtime, entry) == "member fin@shop.example"
    # What remains, refunded whole (an empty amount), then no form is left.
    assert (await _refund(dashboard, page)).status_code == 303
    read = await client.get(f"{API}/payments/{reference}", headers=merchant.headers())
    assert read.json()["data"]["amount_refunded"] == 1000
    assert 'id="refund"' not in (await dashboard.get(page)).text


async def test_a_refund_past_what_remains_is_the_page_again_saying_why(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant, reference = await _paid(client, runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    page = f"/dashboard/test/payments/{reference}"
    for amount in ("5000", "-3", "douze"):
        answer = await _refund(dashboard, page, amount=amount)
        assert answer.status_code == 422, (amount, answer.text)
        assert 'id="action-refused"' in answer.text
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 0
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0


async def test_a_viewer_sees_no_form_and_is_refused_and_a_post_needs_its_token(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant, reference = await _paid(client, runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "v@shop.example"))
    page = f"/dashboard/test/payments/{reference}"
    shown = await dashboard.get(page)
    assert shown.status_code == 200 and 'id="refund"' not in shown.text
    csrf = _CSRF.search(shown.text)
    assert csrf is not None
    refused = await dashboard.post(f"{page}/refund", {"csrf": csrf.group(1), "amount": "100"})
    assert refused.status_code == 403 and "lecture seule" in refused.text
    forged = await dashboard.post(f"{page}/refund", {"csrf": "forged", "amount": "100"})
    assert forged.status_code == 403 and "ne vient pas de l&#39;espace marchand" in forged.text
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 0


async def test_live_money_waits_while_the_merchant_is_not_active(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant, reference = await _paid(client, runtime, live=True)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    page = f"/dashboard/payments/{reference}"
    async with unit_of_work(runtime.sessionmaker) as session:
        await merchants.set_status(session, merchant.id, "suspended")
    assert (await dashboard.get(page)).status_code == 200  # still readable
    answer = await _refund(dashboard, page, amount="100")
    assert answer.status_code == 403 and "n&#39;est pas actif" in answer.text
    assert await scalar(runtime, "SELECT count(*) FROM refunds") == 0
