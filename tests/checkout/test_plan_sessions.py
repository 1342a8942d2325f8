"""A checkout session that pays one instalment of an installment plan (issue 25): the page
shows the plan's progress and the bounds of this instalment, the customer chooses the
amount within them, and the instalment counts toward the plan as any other does."""

from __future__ import annotations

import httpx

from cauri.runtime import Runtime
from tests.checkout.builders import fetch, open_session, page_path, session_body, submit
from tests.checkout.test_attempts import AT_ONCE, attempt_of, payment
from tests.plans.builders import create_plan
from tests.plans.builders import fetch as fetch_plan
from tests.support import assert_error, make_merchant, scalar

SESSIONS = "/api/v1/checkout-sessions"


async def test_a_plan_s_session_pays_an_instalment_the_customer_chooses(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=50_000)
    body = session_body(plan=plan["reference"]) | {"amount": None}
    created = await client.post(SESSIONS, json=body, headers=merchant.headers())
    assert created.status_code == 201, created.text
    checkout = created.json()["data"]
    assert (checkout["plan"], checkout["amount"], checkout["currency"]) == (
        plan["reference"],
        None,
        "XOF",
    )
    form = await client.get(page_path(checkout), params={"operator": "mtn"})
    assert "0\u00a0XOF payés sur 50\u202f000\u00a0XOF" in form.text
    assert 'name="amount"' in form.text and "Entre 1\u00a0XOF et 50\u202f000\u00a0XOF" in form.text
    too_much = await submit(client, checkout, "mtn", phone_number=AT_ONCE, amount="60 000")
    assert too_much.status_code == 422 and 'id="amount-error"' in too_much.text
    assert await scalar(runtime, "SELECT count(*) FROM payments") == 0
    paid = attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE, amount="20 000"))
    made = await payment(client, merchant, paid)
    assert (made["amount"], made["status"], made["checkout_session"]) == (
        20_000,
        "succeeded",
        checkout["reference"],
    )
    assert (await fetch_plan(client, merchant, plan["reference"]))["paid_amount"] == 20_000
    found = await fetch(client, merchant, checkout["reference"])
    assert (found["status"], found["payment"]) == ("complete", paid)


async def test_a_plan_s_session_may_fix_the_instalment(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    plan = await create_plan(client, merchant, target_amount=50_000)
    checkout = await open_session(client, merchant, plan=plan["reference"], amount=10_000)
    form = await client.get(page_path(checkout), params={"operator": "mtn"})
    assert 'name="amount"' not in form.text
    attempt_of(await submit(client, checkout, "mtn", phone_number=AT_ONCE))
    assert (await fetch_plan(client, merchant, plan["reference"]))["paid_amount"] == 10_000


async def test_a_session_needs_an_amount_or_a_plan_of_the_caller(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    merchant = await make_merchant(runtime)
    other = await make_merchant(runtime, name="Autre")
    theirs = await create_plan(client, other)
    for body, field in (
        ({"return_url": "https://b.example"}, "amount"),
        (session_body(plan="inconnu"), "plan"),
        (session_body(plan=theirs["reference"]), "plan"),
    ):
        refused = await client.post(SESSIONS, json=body, headers=merchant.headers())
        assert field in assert_error(refused, 422, "invalid_request")["details"]
    mine = await create_plan(client, merchant)
    wrong = await client.post(
        SESSIONS,
        json=session_body(plan=mine["reference"], currency="XAF"),
        headers=merchant.headers(),
    )
    assert "currency" in assert_error(wrong, 422, "invalid_request")["details"]
    assert await scalar(runtime, "SELECT count(*) FROM checkout_sessions") == 0
