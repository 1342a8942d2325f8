"""Issue 14, the staff's search (cauri.staff.search, `cauri search`): payments, plans, payouts
and refunds across merchants by reference, external_id, merchant, last digits of the number,
status, mode and period; newest first, paginated like the API's lists."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.dialects import postgresql

from cauri.kit.clock import ManualClock
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.pagination import Page
from cauri.kit.period import Period
from cauri.models import Payment
from cauri.runtime import Runtime
from cauri.staff.search import _ends_with
from tests.foundation.builders import run_cli
from tests.staff.traffic import A_NUMBER, PLAN_NUMBER, found, traffic


async def test_payments_by_each_filter(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    seen = await traffic(client, runtime, clock)
    paid, refused, pending, live, others = (
        seen.paid["reference"],
        seen.refused["reference"],
        seen.pending["reference"],
        seen.live["reference"],
        seen.others["reference"],
    )
    everything, total = await found(runtime, "payments")
    # Newest first, across merchants and environments, instalments included.
    assert everything == [others, seen.instalment, live, pending, refused, paid]
    assert total == 6

    assert await found(runtime, "payments", reference=paid) == ([paid], 1)
    by_identifier = await found(runtime, "payments", reference=seen.paid["identifier"].lower())
    assert by_identifier == ([paid], 1)
    assert await found(runtime, "payments", reference="not-a-reference") == ([], 0)
    # An external_id is unique within a merchant's environment only.
    assert await found(runtime, "payments", external_id="order-paid") == ([others, paid], 2)
    shop_test, _ = await found(runtime, "payments", merchant_id=seen.shop.id, livemode=False)
    assert shop_test == [seen.instalment, pending, refused, paid]
    assert (await found(runtime, "payments", livemode=True))[0] == [live]
    assert (await found(runtime, "payments", status="failed"))[0] == [refused]
    assert (await found(runtime, "payments", status="pending"))[0] == [pending]

    # The last digits: "0000" ends four numbers; more digits tell them apart.
    assert (await found(runtime, "payments", phone_digits="10000"))[0] == [live, paid]
    assert (await found(runtime, "payments", phone_digits=A_NUMBER))[0] == [live, paid]
    assert (await found(runtime, "payments", phone_digits="0000"))[0] == [
        others,
        seen.instalment,
        live,
        paid,
    ]
    assert (await found(runtime, "payments", phone_digits="+0002"))[0] == [pending]
    assert (await found(runtime, "payments", phone_digits="90000"))[0] == []

    # The period, by creation: `others` was made a day after the rest.
    day_of_others = clock.now().date().isoformat()
    assert (await found(runtime, "payments", period=Period.parse(day_of_others, None)))[0] == [
        others
    ]
    before = Period.parse(None, seen.refused["created_at"])
    assert (await found(runtime, "payments", period=before))[0] == [refused, paid]
    combined = await found(
        runtime, "payments", merchant_id=seen.shop.id, phone_digits="0000", livemode=False
    )
    assert combined == ([seen.instalment, paid], 2)


async def test_pages_like_the_api(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    seen = await traffic(client, runtime, clock)
    first, total = await found(runtime, "payments", page=Page(1, 4))
    second, _ = await found(runtime, "payments", page=Page(2, 4))
    assert total == 6 and len(first) == 4 and len(second) == 2
    assert first + second == (await found(runtime, "payments"))[0]
    assert seen.paid["reference"] == second[-1]


async def test_plans_payouts_and_refunds(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock
) -> None:
    seen = await traffic(client, runtime, clock)
    plan = seen.plan["reference"]
    assert await found(runtime, "plans", reference=plan) == ([plan], 1)
    assert await found(runtime, "plans", external_id="plan-1") == ([plan], 1)
    # A plan's number is its instalments'.
    assert await found(runtime, "plans", phone_digits=PLAN_NUMBER[-6:]) == ([plan], 1)
    assert await found(runtime, "plans", phone_digits="10000") == ([], 0)
    assert await found(runtime, "plans", status="pending", merchant_id=seen.shop.id) == (
        [plan],
        1,
    )
    assert await found(runtime, "plans", merchant_id=seen.other.id) == ([], 0)

    payout, held = seen.payout["reference"], seen.held["reference"]
    assert (await found(runtime, "payouts"))[0] == [held, payout]
    assert await found(runtime, "payouts", reference=payout) == ([payout], 1)
    assert await found(runtime, "payouts", external_id="po-1") == ([payout], 1)
    assert await found(runtime, "payouts", status="pending") == ([held], 1)
    assert await found(runtime, "payouts", phone_digits="0002") == ([held], 1)
    assert await found(runtime, "payouts", livemode=True) == ([], 0)

    refund = seen.refund["reference"]
    assert await found(runtime, "refunds", reference=refund) == ([refund], 1)
    # A refund's external_id is its payment's.
    assert await found(runtime, "refunds", external_id="order-paid") == ([refund], 1)
    assert await found(runtime, "refunds", phone_digits="110000") == ([refund], 1)
    assert await found(runtime, "refunds", phone_digits="440000") == ([], 0)
    assert await found(runtime, "refunds", status="succeeded", merchant_id=seen.shop.id) == (
        [refund],
        1,
    )


@pytest.mark.parametrize(
    ("kind", "wanted", "field"),
    [
        ("payments", {"status": "done"}, "status"),
        ("plans", {"status": "refused"}, "status"),
        ("payouts", {"status": "refunded"}, "status"),
        ("refunds", {"phone_digits": "123"}, "phone_digits"),
        ("payments", {"phone_digits": "12a4"}, "phone_digits"),
    ],
)
async def test_bad_filters_are_named(
    runtime: Runtime, kind: str, wanted: dict[str, str], field: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        await found(runtime, kind, **wanted)
    assert field in refused.value.envelope()["error"]["details"]


async def test_an_unknown_merchant_is_not_found(runtime: Runtime) -> None:
    with pytest.raises(NotFound):
        await found(runtime, "payouts", merchant_id="mer_unknown")


async def test_last_digits_read_the_index(runtime: Runtime) -> None:
    """The search's expression is the index's (migration 0018): the plan reads the index."""
    condition = _ends_with(Payment.phone_number, "1234").compile(
        dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}
    )
    async with runtime.sessionmaker() as session:
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        explain = f"EXPLAIN SELECT id FROM payments WHERE {condition}"  # noqa: S608 - no input
        plan = (await session.execute(text(explain))).scalars()
        assert "ix_payments_phone_suffix" in "\n".join(plan)


async def test_search_cli(
    client: httpx.AsyncClient, runtime: Runtime, clock: ManualClock, database_url: str
) -> None:
    seen = await traffic(client, runtime, clock)
    result = await run_cli(
        database_url, "search", "payments", "--last-digits", "10000", "--per-page", "1", "--json"
    )
    shown = result.json()
    assert shown["meta"] == {"current_page": 1, "per_page": 1, "total": 2, "last_page": 2}
    api_view = await client.get(
        f"/api/v1/payments/{seen.live['reference']}", headers=seen.shop.headers(True)
    )
    assert shown["data"] == [api_view.json()["data"] | {"merchant_id": seen.shop.id}]

    text_view = await run_cli(database_url, "search", "payouts", "--status", "pending")
    assert text_view.exit_code == 0, text_view.stderr
    header, row, footer = text_view.stdout.splitlines()
    assert header.split()[:3] == ["created_at", "reference", "merchant_id"]
    assert seen.held["reference"] in row and "22997000***" not in row  # masked: 4 hidden
    assert "2299700****" in row
    assert footer == "page 1 of 1, 1 in all"

    bad = await run_cli(database_url, "search", "refunds", "--from", "yesterday")
    assert bad.error()["code"] == "invalid_request" and bad.stdout == ""
