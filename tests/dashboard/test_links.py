"""Issue 26: payment links from the dashboard (issue 25's): made with the API's rules, listed
with address, QR code and uses, deactivated; audited with the member as actor; a viewer
reads them, only owners and finance change them."""

from __future__ import annotations

import re

import httpx

from cauri.runtime import Runtime
from tests.console.builders import ConsoleClient, make_member
from tests.support import make_merchant, scalar

PAGE = "/dashboard/test/links"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def _post(dashboard: ConsoleClient, action: str, **fields: str) -> httpx.Response:
    found = _CSRF.search((await dashboard.get(PAGE)).text)
    assert found is not None
    return await dashboard.post(action, {"csrf": found.group(1), **fields})


async def test_finance_makes_lists_and_deactivates_links(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    made = await _post(
        dashboard, PAGE, description="Cotisation 2027", amount="15 000", reusable="on"
    )
    assert made.status_code == 303 and made.headers["location"] == f"{PAGE}?fait=cree"
    free = await _post(dashboard, PAGE, description="Don", min_amount="500", max_amount="5000")
    assert free.status_code == 303
    listed = (await client.get("/api/v1/payment-links", headers=merchant.headers())).json()["data"]
    by_description = {link["description"]: link for link in listed}
    fixed, gift = by_description["Cotisation 2027"], by_description["Don"]
    assert (fixed["amount"], fixed["reusable"]) == (15000, True)
    assert (gift["amount"], gift["min_amount"], gift["reusable"]) == (None, 500, False)
    page = await dashboard.get(PAGE + "?fait=cree")
    assert 'id="action-done"' in page.text and fixed["url"] in page.text
    code = fixed["url"].rsplit("/", 1)[1]
    assert f'<img src="/l/{code}/qr.svg"' in page.text
    qr = await dashboard.get(f"/l/{code}/qr.svg")
    assert qr.status_code == 200 and "<svg" in qr.text

    gone = await _post(dashboard, f"{PAGE}/{fixed['reference']}/deactivate")
    assert gone.status_code == 303
    read = await client.get(
        f"/api/v1/payment-links/{fixed['reference']}", headers=merchant.headers()
    )
    assert read.json()["data"]["active"] is False
    trail = await scalar(
        runtime,
        "SELECT string_agg(action, ' ' ORDER BY id) FROM audit_log WHERE actor_kind = 'member'",
    )
    assert trail == "payment_link.create payment_link.create payment_link.deactivate"


async def test_a_refused_link_is_the_form_again_and_a_viewer_only_reads(
    runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, merchant.id, "o@shop.example", "owner"))
    for fields in (
        {"description": "", "amount": "100"},
        {"description": "x", "min_amount": "900", "max_amount": "100"},
        {"description": "x", "amount": "100", "min_amount": "50"},
        {"description": "x", "amount": "douze"},
        {"description": "x", "max_uses": "0", "reusable": "on"},
    ):
        answer = await _post(dashboard, PAGE, **fields)
        assert answer.status_code == 422, (fields, answer.text)
        assert 'class="field-error"' in answer.text or 'id="action-refused"' in answer.text
    assert await scalar(runtime, "SELECT count(*) FROM payment_links") == 0
    viewer = dashboard.another()
    async with viewer:
        await viewer.signed_in_as(await make_member(runtime, merchant.id, "v@shop.example"))
        shown = await viewer.get(PAGE)
        assert shown.status_code == 200 and 'id="link-form"' not in shown.text
        found = _CSRF.search(shown.text)
        assert found is not None
        refused = await viewer.post(PAGE, {"csrf": found.group(1), "description": "x"})
        assert refused.status_code == 403
