"""Issue 26: the dashboard's homes: today's and this month's payments (count, succeeded
volume, success rate), the last 30 days drawn as an SVG on the server, and the alerts (a
failing webhook endpoint, keys expiring, payouts awaiting approval), each environment its
own."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import httpx

from cauri.audit.actor import Actor
from cauri.kit.clock import ManualClock
from cauri.kit.db import unit_of_work
from cauri.kit.money import format_amount
from cauri.merchants.caller import Caller
from cauri.models import ApiKey, Merchant, WebhookDelivery
from cauri.payouts.schemas import PayoutCreate
from cauri.runtime import Runtime
from cauri.signin.formats import format_percent
from cauri.team import drafts
from tests.console.builders import ConsoleClient, make_member
from tests.payouts.builders import top_up
from tests.staff.traffic import pay, to_noon_tomorrow
from tests.support import make_merchant, scalar

REFUSED = "22997000001"


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _row(page: str, table: str) -> str:
    """The text of the first row of the table's body, spaces as one."""
    body = page.split(f'id="{table}"', 1)[1].split("<tbody>", 1)[1]
    return _words(re.sub(r"<[^>]+>", " ", body.split("</tr>", 1)[0]))


async def test_the_home_shows_today_the_month_and_30_days_and_what_needs_someone(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, dashboard: ConsoleClient
) -> None:
    to_noon_tomorrow(clock)
    merchant = await make_merchant(runtime)
    for n, number in enumerate(("22997000000", "22997000000", REFUSED)):
        await pay(client, merchant, amount=1500, phone_number=number, external_id=f"o-{n}")
    owner = await make_member(runtime, merchant.id, "o@shop.example", "owner")
    await dashboard.signed_in_as(owner)

    home = (await dashboard.get("/dashboard/test")).text
    shown = format_amount(3000, "XOF")
    rate = format_percent(2 / 3)
    assert _row(home, "today") == _words(f"XOF 3 2 1 {shown} {rate}")
    assert _row(home, "month") == _row(home, "today")
    bars = re.findall(r'<rect [^>]*height="([0-9.]+)"', home)
    assert len(bars) == 30 and float(bars[-1]) == 96.0 and set(bars[:-1]) == {"0.0"}
    assert 'id="alerts"' not in home
    live = (await dashboard.get("/dashboard/")).text
    assert _row(live, "today") == "Aucun paiement."

    # What needs someone: a draft awaiting a second member (live), a failing endpoint and a
    # key expiring (test).
    owner_id = await scalar(runtime, "SELECT id FROM users")
    await top_up(runtime, merchant.id, 50_000, livemode=True)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            ApiKey.__table__.update()
            .where(ApiKey.merchant_id == merchant.id, ApiKey.livemode.is_(False))
            .values(expires_at=clock.now() + timedelta(days=2))
        )
        session.add(
            WebhookDelivery(
                id=uuid.uuid4(),
                event_id=await scalar(runtime, "SELECT id FROM events LIMIT 1"),
                merchant_id=merchant.id,
                livemode=False,
                event="payment.succeeded",
                url="https://hooks.shop.example/cauri",
                status="failed",
                attempts=8,
                series_attempts=8,
                created_at=clock.now(),
            )
        )
        shop = await session.get(Merchant, merchant.id)
        assert shop is not None
        shop.team_approval_above = 1000
        await session.flush()
        await drafts.ask(
            session,
            runtime,
            Actor.member(owner.email, owner_id),
            Caller(merchant.id, livemode=True),
            PayoutCreate.of({"amount": 5000, "phone_number": "22997000000", "operator": "mtn"}),
        )
    home = (await dashboard.get("/dashboard/test")).text
    assert 'id="alert-endpoint"' in home and "hooks.shop.example" in home
    assert 'id="alert-key"' in home and 'id="alert-drafts"' not in home
    live = (await dashboard.get("/dashboard/")).text
    assert 'id="alert-drafts"' in live and 'id="alert-endpoint"' not in live
