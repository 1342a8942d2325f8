"""Issue 26: payouts asked for from the dashboard, with the API's rules; live ones above the
owner's threshold are drafts (not payouts, not debited, not counted in any cap) until a second
member approves them (maker-checker inside the merchant, with the platform's rules); then an
ordinary payout. Each step audited with the member as its actor."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from cauri.audit.actor import Actor
from cauri.kit.db import unit_of_work
from cauri.kit.errors import Conflict
from cauri.merchants.caller import Caller
from cauri.merchants.service import merchants
from cauri.models import User
from cauri.payouts.schemas import PayoutCreate
from cauri.runtime import Runtime
from cauri.team import actions, drafts
from tests.console.builders import ConsoleClient, Member, make_member
from tests.foundation.builders import open_live_mode
from tests.payments.builders import merchant_available
from tests.payouts.builders import (
    SUCCEEDS,
    create,
    live_operator,
    set_limits,
    set_payout_account,
    top_up,
)
from tests.support import MerchantKeys, ServerThread, make_merchant, scalar

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
LIVE_NEW = "/dashboard/payouts/new"
TEST_NEW = "/dashboard/test/payouts/new"
DRAFTS = "/dashboard/payouts/drafts"
THIRD_PARTY = {"destination": "third_party", "phone_number": SUCCEEDS, "operator": "mtn"}


async def _post_form(
    client: ConsoleClient, page: str, action: str, **fields: str
) -> httpx.Response:
    """Posts `action` with the CSRF token of the page it is on."""
    shown = await client.get(page)
    found = _CSRF.search(shown.text)
    assert found is not None, shown.text
    return await client.post(action, {"csrf": found.group(1), **fields})


async def _ask(client: ConsoleClient, page: str, **fields: str) -> httpx.Response:
    return await _post_form(client, page, page, **fields)


async def _signed_in(server: ServerThread, member: Member) -> ConsoleClient:
    client = ConsoleClient(server.base_url, server.clock, prefix="/dashboard")
    await client.signed_in_as(member)
    return client


@pytest.fixture
async def live_merchant(runtime: Runtime, server: ServerThread) -> MerchantKeys:
    """A merchant with 100,000 XOF in live, a validated own account, and live payouts paid
    by the simulator on the served app."""
    assert server.runtime is not None
    open_live_mode(server.runtime)
    open_live_mode(runtime)  # the API's, in process
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 100_000, livemode=True)
    await set_payout_account(runtime, merchant.id, "22997110000", validated=True)
    return merchant


async def _threshold(runtime: Runtime, merchant_id: str, amount: int) -> None:
    async with unit_of_work(runtime.sessionmaker) as session:
        merchant = await merchants.get(session, merchant_id)
        merchant.team_approval_above = amount


async def _draft_reference(runtime: Runtime) -> str:
    return str(await scalar(runtime, "SELECT reference FROM payout_drafts"))


async def test_a_test_payout_from_the_dashboard_is_a_payout_at_once(
    client: httpx.AsyncClient, runtime: Runtime, dashboard: ConsoleClient
) -> None:
    merchant = await make_merchant(runtime)
    await top_up(runtime, merchant.id, 5000)
    await dashboard.signed_in_as(
        await make_member(runtime, merchant.id, "f@shop.example", "finance")
    )
    answer = await _ask(dashboard, TEST_NEW, amount="1 000", reason="Prime", **THIRD_PARTY)
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith("/dashboard/test/payouts/pyo_")
    shown = await dashboard.get(location)
    assert shown.status_code == 200 and "Prime" in shown.text
    reference = location.rsplit("/", 1)[1]
    read = await client.get(f"/api/v1/payouts/{reference}", headers=merchant.headers())
    assert read.json()["data"]["status"] == "succeeded"
    assert await merchant_available(runtime, merchant.id) < 5000 - 1000 + 1
    entry = "SELECT actor_kind || ' ' || actor_name || ' ' || action FROM audit_log"
    assert await scalar(runtime, entry) == "member f@shop.example payout.create"


async def test_a_live_payout_at_or_below_the_threshold_leaves_at_once(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    await _threshold(runtime, live_merchant.id, 20_000)
    finance = await _signed_in(
        server, await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    )
    async with finance:
        answer = await _ask(finance, LIVE_NEW, destination="own", amount="20000")
    assert answer.status_code == 303 and answer.headers["location"].startswith(
        "/dashboard/payouts/pyo_"
    )
    assert await scalar(runtime, "SELECT count(*) FROM payout_drafts") == 0
    assert await scalar(runtime, "SELECT status FROM payouts") == "succeeded"


async def test_above_the_threshold_a_draft_waits_for_a_second_member_then_is_paid(
    client: httpx.AsyncClient,
    runtime: Runtime,
    server: ServerThread,
    live_merchant: MerchantKeys,
) -> None:
    await _threshold(runtime, live_merchant.id, 10_000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with (
        await _signed_in(server, maker) as finance,
        await _signed_in(server, checker) as owner,
    ):
        form = await finance.get(LIVE_NEW)
        assert 'id="threshold-note"' in form.text
        asked = await _ask(finance, LIVE_NEW, destination="own", amount="25000", reason="Loyer")
        assert asked.status_code == 303 and asked.headers["location"] == f"{DRAFTS}?fait=brouillon"
        # A draft: no payout, nothing debited, nothing the API lists.
        assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
        assert await merchant_available(runtime, live_merchant.id, livemode=True) == 100_000
        listed = await client.get("/api/v1/payouts", headers=live_merchant.headers(True))
        assert listed.json()["data"] == []
        reference = await _draft_reference(runtime)
        # The maker may cancel, not approve: the page offers no approval, and a forged
        # approval is refused.
        page = (await finance.get(DRAFTS)).text
        assert f"drafts/{reference}/cancel" in page and f"drafts/{reference}/approve" not in page
        refused = await _post_form(finance, DRAFTS, f"{DRAFTS}/{reference}/approve")
        assert refused.status_code == 409 and "déjà approuvé" in refused.text
        # The second member approves: an ordinary payout, its external_id the draft's.
        approved = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/approve")
        assert approved.status_code == 303, approved.text
        assert 'id="no-drafts"' in (await owner.get(DRAFTS)).text
    payout = await client.get(f"/api/v1/payouts/{reference}", headers=live_merchant.headers(True))
    assert payout.json()["data"]["status"] == "succeeded"
    assert payout.json()["data"]["reason"] == "Loyer"
    assert await merchant_available(runtime, live_merchant.id, livemode=True) < 75_001
    trail = await scalar(
        runtime,
        "SELECT string_agg(actor_name || ' ' || action, ', ' ORDER BY id) FROM audit_log",
    )
    assert trail == (
        "f@shop.example payout_draft.create, o@shop.example payout_draft.approve, "
        "o@shop.example payout.create"
    )


async def test_simultaneous_approvals_of_one_draft_make_one_payout(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    await _threshold(runtime, live_merchant.id, 1000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checkers = [
        await make_member(runtime, live_merchant.id, f"o{n}@shop.example", "owner")
        for n in range(4)
    ]
    async with await _signed_in(server, maker) as finance:
        await _ask(finance, LIVE_NEW, destination="own", amount="30000")
    reference = await _draft_reference(runtime)
    clients = [await _signed_in(server, checker) for checker in checkers]
    try:
        tokens = [_CSRF.search((await c.get(DRAFTS)).text) for c in clients]
        answers = await asyncio.gather(
            *(
                c.post(f"{DRAFTS}/{reference}/approve", {"csrf": t.group(1)})  # type: ignore[union-attr]
                for c, t in zip(clients, tokens, strict=True)
            )
        )
    finally:
        for c in clients:
            await c.http.aclose()
    assert sorted(a.status_code for a in answers) == [303, 409, 409, 409]
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 1
    assert await merchant_available(runtime, live_merchant.id, livemode=True) < 70_001
    assert await scalar(runtime, "SELECT status FROM payout_drafts") == "approved"


async def test_a_draft_is_not_counted_in_the_daily_cap_nor_debited_and_a_refused_approval_keeps_it(
    client: httpx.AsyncClient,
    runtime: Runtime,
    server: ServerThread,
    live_merchant: MerchantKeys,
) -> None:
    await _threshold(runtime, live_merchant.id, 1000)
    await set_limits(runtime, live_merchant.id, daily=60_000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with await _signed_in(server, maker) as finance:
        asked = await _ask(finance, LIVE_NEW, amount="55000", **THIRD_PARTY)
        assert asked.status_code == 303, asked.text
    # Not counted: 50,000 more through the API pass the 60,000 cap, and take the balance.
    paid = await create(client, live_merchant.headers(True), amount=50_000)
    assert paid.status_code == 201, paid.text
    reference = await _draft_reference(runtime)
    async with await _signed_in(server, checker) as owner:
        # Now the cap refuses it: the page says why, the draft still waits.
        refused = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/approve")
        assert refused.status_code == 403 and 'id="action-refused"' in refused.text
        assert await scalar(runtime, "SELECT status FROM payout_drafts") == "awaiting"
        await set_limits(runtime, live_merchant.id, daily=1_000_000)
        # Then the balance does not cover it (402): still waiting, nothing written.
        refused = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/approve")
        assert refused.status_code == 402 and f'id="draft-{reference}"' in refused.text
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 1
    assert await scalar(runtime, "SELECT status FROM payout_drafts") == "awaiting"
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 1  # the draft's


async def test_rejected_and_cancelled_drafts_never_pay_and_only_the_maker_cancels(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    await _threshold(runtime, live_merchant.id, 1000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    other = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with await _signed_in(server, maker) as finance, await _signed_in(server, other) as owner:
        await _ask(finance, LIVE_NEW, destination="own", amount="5000")
        first = await _draft_reference(runtime)
        refused = await _post_form(owner, DRAFTS, f"{DRAFTS}/{first}/cancel")
        assert refused.status_code == 409 and "Seul le membre" in refused.text
        assert (await _post_form(owner, DRAFTS, f"{DRAFTS}/{first}/reject")).status_code == 303
        await _ask(finance, LIVE_NEW, destination="own", amount="6000")
        second = await scalar(runtime, "SELECT reference FROM payout_drafts WHERE amount = 6000")
        assert (await _post_form(finance, DRAFTS, f"{DRAFTS}/{second}/cancel")).status_code == 303
        again = await _post_form(owner, DRAFTS, f"{DRAFTS}/{second}/approve")
        assert again.status_code == 409 and "n&#39;attend plus" in again.text
    statuses = await scalar(
        runtime, "SELECT string_agg(status, ' ' ORDER BY amount) FROM payout_drafts"
    )
    assert statuses == "rejected cancelled"
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
    assert await merchant_available(runtime, live_merchant.id, livemode=True) == 100_000


async def test_a_member_invited_by_the_maker_within_24_hours_cannot_be_the_second(
    runtime: Runtime, live_merchant: MerchantKeys
) -> None:
    """The platform's rule of two-person actions: whoever just set an account up may hold
    its sign-in."""
    owner = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    owner_id = await scalar(runtime, "SELECT id FROM users")
    maker = Actor.member(owner.email, owner_id)
    caller = Caller(live_merchant.id, livemode=True)
    await _threshold(runtime, live_merchant.id, 1000)
    async with unit_of_work(runtime.sessionmaker) as session:
        invited = await actions.invite(
            session, runtime, maker, live_merchant.id, email="new@shop.example", role="finance"
        )
        body = PayoutCreate.of({"amount": 5000})
        draft = await drafts.ask(session, runtime, maker, caller, body)
    second = Actor.member(invited.account.email, invited.account.id)
    async with runtime.sessionmaker() as session:
        with pytest.raises(Conflict, match="24 heures"):
            await drafts.approve(session, runtime, second, caller, draft.reference)


async def test_roles_refused_bad_input_refused_and_live_refused_while_inactive(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    viewer = await make_member(runtime, live_merchant.id, "v@shop.example")
    finance = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    async with await _signed_in(server, viewer) as reader:
        refused = await reader.get(LIVE_NEW)
        assert refused.status_code == 403 and "lecture seule" in refused.text
        page = (await reader.get(DRAFTS)).text
        assert 'id="no-drafts"' in page and "team_approval_above" not in page
        forged = await _post_form(reader, DRAFTS, f"{DRAFTS}/threshold", team_approval_above="5")
        assert forged.status_code == 403
    async with await _signed_in(server, finance) as mover:
        for fields in (
            {"destination": "own", "amount": "douze"},
            {"destination": "own", "amount": "-5"},
            {"destination": "third_party", "amount": "1000", "operator": "mtn"},
            {"destination": "third_party", "amount": "1000", **THIRD_PARTY, "operator": "nope"},
            {"destination": "own", "amount": "5", "reason": "x" * 300},
        ):
            answer = await _ask(mover, LIVE_NEW, **fields)
            assert answer.status_code == 422, (fields, answer.text)
            assert 'class="alert"' in answer.text and 'id="payout-form"' in answer.text
        async with unit_of_work(runtime.sessionmaker) as session:
            await merchants.set_status(session, live_merchant.id, "suspended")
        inactive = await _ask(mover, LIVE_NEW, destination="own", amount="1000")
        assert inactive.status_code == 403 and "n&#39;est pas actif" in inactive.text
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
    assert await scalar(runtime, "SELECT count(*) FROM payout_drafts") == 0
    assert await scalar(runtime, "SELECT count(*) FROM audit_log") == 0


async def test_the_owner_sets_the_threshold_audited(
    runtime: Runtime, dashboard: ConsoleClient, live_merchant: MerchantKeys
) -> None:
    await dashboard.signed_in_as(
        await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    )
    for wrong in ("-1", "abc", "1,5"):
        answer = await _post_form(
            dashboard, DRAFTS, f"{DRAFTS}/threshold", team_approval_above=wrong
        )
        assert answer.status_code == 422, (wrong, answer.text)
    set_ = await _post_form(dashboard, DRAFTS, f"{DRAFTS}/threshold", team_approval_above="50 000")
    assert set_.status_code == 303
    assert 'id="action-done"' in (await dashboard.get(set_.headers["location"])).text
    assert await scalar(runtime, "SELECT team_approval_above FROM merchants") == 50_000
    cleared = await _post_form(dashboard, DRAFTS, f"{DRAFTS}/threshold", team_approval_above="")
    assert cleared.status_code == 303
    assert await scalar(runtime, "SELECT team_approval_above FROM merchants") is None
    actions_ = await scalar(runtime, "SELECT string_agg(action, ' ') FROM audit_log")
    assert actions_ == "team.payout_threshold team.payout_threshold"


async def test_a_form_sent_twice_makes_one_payout_and_an_operator_s_refusal_is_audited(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    assert server.runtime is not None
    finance = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    async with await _signed_in(server, finance) as mover:
        shown = (await mover.get(LIVE_NEW)).text
        csrf = _CSRF.search(shown)
        key = re.search(r'name="external_id" value="(dsh_[0-9a-f]+)"', shown)
        assert csrf is not None and key is not None
        fields = {"csrf": csrf.group(1), "external_id": key.group(1)}
        fields |= {"destination": "own", "amount": "1000"}
        first, second = [await mover.post(LIVE_NEW, fields) for _ in range(2)]
        assert first.status_code == second.status_code == 303
        assert first.headers["location"] == second.headers["location"]
        assert await scalar(runtime, "SELECT count(*) FROM payouts") == 1
        # The operator refuses: the payout is kept failed, the refusal said, the member's
        # action audited; the form comes back with a new key.
        live_operator(server.runtime, refuse_disbursements=True)
        refused = await _ask(mover, LIVE_NEW, destination="own", amount="2000")
        assert refused.status_code == 402 and 'class="alert"' in refused.text
        again = re.search(r'name="external_id" value="(dsh_[0-9a-f]+)"', refused.text)
        assert again is not None and again.group(1) != key.group(1)
    statuses = await scalar(runtime, "SELECT string_agg(status, ' ' ORDER BY amount) FROM payouts")
    assert statuses == "succeeded failed"
    audited = "SELECT count(*) FROM audit_log WHERE action = 'payout.create'"
    assert await scalar(runtime, audited) == 2


async def test_review_a_draft_form_sent_twice_is_one_draft_and_a_changed_or_taken_one_is_refused(
    client: httpx.AsyncClient, runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    """Review findings 1, 4, 5: a form sent twice above the threshold made two drafts (an
    approver approving both paid twice); an own-account draft approved after the validated
    account changed paid the new number; a payout whose external_id was a draft's reference
    made the draft's approval a replay of it."""
    await _threshold(runtime, live_merchant.id, 1000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with await _signed_in(server, maker) as finance:
        shown = (await finance.get(LIVE_NEW)).text
        csrf, key = _CSRF.search(shown), re.search(r'name="external_id" value="([^"]+)"', shown)
        assert csrf is not None and key is not None
        fields = {"csrf": csrf.group(1), "external_id": key.group(1)}
        fields |= {"destination": "own", "amount": "5000"}
        for _ in range(2):
            assert (await finance.post(LIVE_NEW, fields)).status_code == 303
        assert await scalar(runtime, "SELECT count(*) FROM payout_drafts") == 1
        await _ask(finance, LIVE_NEW, destination="own", amount="6000")
    first = await scalar(runtime, "SELECT reference FROM payout_drafts WHERE amount = 5000")
    second = await scalar(runtime, "SELECT reference FROM payout_drafts WHERE amount = 6000")
    await set_payout_account(runtime, live_merchant.id, "22996330000", validated=True)
    taken = await create(client, live_merchant.headers(True), amount=100, external_id=second)
    assert taken.status_code == 201, taken.text
    async with await _signed_in(server, checker) as owner:
        for reference in (first, second):
            refused = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/approve")
            assert refused.status_code == 409, refused.text
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 1  # the API's own
    statuses = await scalar(runtime, "SELECT string_agg(status, ' ') FROM payout_drafts")
    assert statuses == "awaiting awaiting"


async def test_review_a_draft_of_a_maker_disabled_or_no_longer_moving_money_is_only_rejected(
    runtime: Runtime, server: ServerThread, live_merchant: MerchantKeys
) -> None:
    """Review: a draft stayed approvable once its maker was disabled or made a viewer."""
    await _threshold(runtime, live_merchant.id, 1000)
    maker = await make_member(runtime, live_merchant.id, "f@shop.example", "finance")
    checker = await make_member(runtime, live_merchant.id, "o@shop.example", "owner")
    async with await _signed_in(server, maker) as finance:
        assert (await _ask(finance, LIVE_NEW, destination="own", amount="5000")).status_code == 303
    reference = await _draft_reference(runtime)
    async with unit_of_work(runtime.sessionmaker) as session:
        await session.execute(
            User.__table__.update().where(User.email == maker.email).values(role="viewer")
        )
    async with await _signed_in(server, checker) as owner:
        refused = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/approve")
        assert refused.status_code == 409 and "ne peut plus demander" in refused.text
        rejected = await _post_form(owner, DRAFTS, f"{DRAFTS}/{reference}/reject")
        assert rejected.status_code == 303
    assert await scalar(runtime, "SELECT count(*) FROM payouts") == 0
