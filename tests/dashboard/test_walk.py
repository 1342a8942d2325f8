"""Issue 26: the isolation walk over the pages that act on a reference (another merchant's
draft, of a payout or of a file of payouts, or its payment link is a 404, nothing changes),
and a payment's page offering its failed webhook delivery's resend to those who manage the
webhooks."""

from __future__ import annotations

import re

import httpx

from cauri.audit.actor import Actor
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.merchants.caller import Caller
from cauri.models import Merchant, PayoutBatchDraft
from cauri.payouts.schemas import PayoutCreate
from cauri.runtime import Runtime
from cauri.team import batch_drafts, drafts
from cauri.worker.runner import Worker
from tests.console.builders import ConsoleClient, make_member
from tests.console.test_actions import catch_up
from tests.dashboard.test_payout_batches import rows
from tests.payouts.builders import top_up
from tests.staff.traffic import pay
from tests.support import make_merchant, scalar
from tests.webhooks.builders import set_endpoint
from tests.webhooks.receiver import Receiver

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


async def test_another_merchants_drafts_or_link_are_a_404_and_nothing_changes(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    theirs = await make_merchant(runtime, name="Autre")
    maker = await make_member(runtime, theirs.id, "o@autre.example", "owner")
    maker_id = await scalar(runtime, "SELECT id FROM users")
    await top_up(runtime, theirs.id, 50_000, livemode=True)
    async with unit_of_work(runtime.sessionmaker) as session:
        shop = await session.get(Merchant, theirs.id)
        assert shop is not None
        shop.team_approval_above = 1000
        await session.flush()
        body = PayoutCreate.of({"amount": 5000, "phone_number": "22997000000", "operator": "mtn"})
        caller = Caller(theirs.id, livemode=True)
        who = Actor.member(maker.email, maker_id)
        draft = await drafts.ask(session, runtime, who, caller, body)
        file = await batch_drafts.ask(session, runtime, who, caller, "paie.csv", rows(5000))
    link = await client.post(
        "/api/v1/payment-links", json={"description": "Don"}, headers=theirs.headers()
    )
    assert link.status_code == 201, link.text
    mine = await make_merchant(runtime)
    await dashboard.signed_in_as(await make_member(runtime, mine.id, "o@mine.example", "owner"))
    csrf = await dashboard.csrf_of("/dashboard/")
    assert isinstance(file, PayoutBatchDraft)
    batch_draft = f"/dashboard/payout-batches/drafts/{file.reference}"
    assert (await dashboard.get(batch_draft)).status_code == 404
    for action in (
        f"{batch_draft}/approve",
        f"{batch_draft}/reject",
        f"{batch_draft}/cancel",
        f"/dashboard/payouts/drafts/{draft.reference}/approve",
        f"/dashboard/payouts/drafts/{draft.reference}/reject",
        f"/dashboard/payouts/drafts/{draft.reference}/cancel",
        f"/dashboard/test/links/{link.json()['data']['reference']}/deactivate",
    ):
        answer = await dashboard.post(action, {"csrf": csrf})
        assert answer.status_code == 404, (action, answer.text)
    assert await scalar(runtime, "SELECT status FROM payout_drafts") == "awaiting"
    assert await scalar(runtime, "SELECT status FROM payout_batch_drafts") == "awaiting"
    assert await scalar(runtime, "SELECT active FROM payment_links") is True
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0


async def test_a_payments_failed_delivery_is_resent_from_its_page_by_a_developer(
    client: httpx.AsyncClient,
    runtime: Runtime,
    clock: ManualClock,
    worker: Worker,
    dashboard: ConsoleClient,
) -> None:
    merchant = await make_merchant(runtime)
    with Receiver() as receiver:
        receiver.answer(500)
        await set_endpoint(client, merchant, receiver.url)
        payment = await pay(client, merchant, amount=1000, external_id="o-1")
        catch_up(clock)
        await worker.drain()
        await receiver.wait_for(1)
    page = f"/dashboard/test/payments/{payment['reference']}"
    viewer = dashboard.another()
    async with viewer:
        await viewer.signed_in_as(await make_member(runtime, merchant.id, "v@shop.example"))
        assert "/webhook/deliveries/" not in (await viewer.get(page)).text
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "d@shop.example", "developer")
    )
    shown = (await dashboard.get(page)).text
    found = re.search(
        r'action="(/dashboard/test/developers/webhook/deliveries/[^"]+/resend)"', shown
    )
    assert found is not None, shown
    csrf = _CSRF.search(shown)
    assert csrf is not None
    resent = await dashboard.post(found.group(1), {"csrf": csrf.group(1)})
    assert resent.status_code == 200 and "Livraison renvoyée" in resent.text
