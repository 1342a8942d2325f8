"""The chaos campaign's verdict catches what it is there to catch (tools/chaos_campaign): a
campaign that passes because its checks cannot fail proves nothing. Each breach is planted
here, one at a time, on both sides of the money."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import text

from cauri.runtime import Runtime
from tests.support import make_merchant
from tools.chaos_campaign.campaign import Verdict
from tools.chaos_campaign.operators import Moved
from tools.chaos_campaign.verdict import Operation, against_the_operators, waiting_untold

PAYMENT, PAYOUT, REFUND = "a1b2c3d4-0000-4000-8000-000000000001", "po_1", "re_1"
WAVE_SESSION = "cos-18cnt7gjg1"


def _operation(
    subject: str, ref: str, action: str, status: str = "succeeded", **kw: str
) -> Operation:
    return Operation(
        id=kw.get("id", ref),
        connector=kw.get("connector", "pawapay"),
        action=action,
        subject=subject,
        subject_ref=ref,
        status=status,
        operator_reference=kw.get("operator_reference"),
        flagged=False,
        refund_of=kw.get("refund_of"),
    )


def _judged(
    operations: list[Operation], statuses: dict[tuple[str, str], str], moved: list[Moved]
) -> Verdict:
    verdict = Verdict()
    against_the_operators(verdict, operations, statuses, moved)
    return verdict


COLLECTED = _operation("payment", PAYMENT, "collect")
COLLECTION = Moved("pawapay", "collect", (PAYMENT,), Decimal(1000))


def test_what_matches_on_both_sides_is_no_breach() -> None:
    paid_out = _operation("payout", PAYOUT, "disburse")
    verdict = _judged(
        [COLLECTED, paid_out],
        {("payment", PAYMENT): "succeeded", ("payout", PAYOUT): "succeeded"},
        [COLLECTION, Moved("pawapay", "disburse", (PAYOUT,), Decimal(500))],
    )
    assert verdict.count == 0


def test_money_moved_for_no_operation_is_a_breach() -> None:
    verdict = _judged([], {}, [Moved("pawapay", "disburse", ("someone-else",), Decimal(500))])
    assert verdict.breaches == {"moved_unknown": 1}


def test_a_payout_that_reached_its_operator_twice_is_a_breach() -> None:
    paid_out = _operation("payout", PAYOUT, "disburse", connector="wave-sn")
    twice = [Moved("wave-sn", "disburse", (f"wave-{n}", PAYOUT), Decimal(500)) for n in (1, 2)]
    verdict = _judged([paid_out], {("payout", PAYOUT): "succeeded"}, twice)
    assert verdict.breaches == {"moved_twice": 1}


def test_a_payout_paid_by_its_operator_and_failed_in_cauri_is_a_breach() -> None:
    verdict = _judged(
        [_operation("payout", PAYOUT, "disburse", status="failed")],
        {("payout", PAYOUT): "failed"},
        [Moved("pawapay", "disburse", (PAYOUT,), Decimal(500))],
    )
    assert verdict.breaches == {"paid_and_recredited": 1}


def test_a_payment_collected_but_failed_in_cauri_is_a_breach() -> None:
    verdict = _judged([COLLECTED], {("payment", PAYMENT): "failed"}, [COLLECTION])
    assert verdict.breaches == {"collected_not_credited": 1}


def test_a_success_the_operator_never_saw_is_a_breach() -> None:
    verdict = _judged([COLLECTED], {("payment", PAYMENT): "succeeded"}, [])
    assert verdict.breaches == {"credited_not_collected": 1}


def test_refunds_at_the_operator_above_the_payment_are_a_breach() -> None:
    refunds = [
        _operation("refund", f"re_{n}", "refund", id=f"op-re-{n}", refund_of=PAYMENT)
        for n in (1, 2)
    ]
    statuses = {("payment", PAYMENT): "refunded"} | {
        ("refund", f"re_{n}"): "succeeded" for n in (1, 2)
    }
    moved = [
        COLLECTION,
        Moved("pawapay", "refund", ("op-re-1",), Decimal(600), PAYMENT),
        Moved("pawapay", "refund", ("op-re-2",), Decimal(600), PAYMENT),
    ]
    assert _judged([COLLECTED, *refunds], statuses, moved).breaches == {"refund_over_payment": 1}


def test_a_whole_refund_named_only_by_its_payment_is_matched_through_it() -> None:
    """Wave refunds a checkout session, with nothing of the refund's own in it."""
    collected = _operation(
        "payment", PAYMENT, "collect", connector="wave-sn", operator_reference=WAVE_SESSION
    )
    refund = _operation(
        "refund", REFUND, "refund", id="op-re", connector="wave-sn", refund_of=PAYMENT
    )
    moved = [
        Moved("wave-sn", "collect", (WAVE_SESSION, PAYMENT), Decimal(1000)),
        Moved("wave-sn", "refund", (PAYMENT, WAVE_SESSION), Decimal(1000), PAYMENT),
    ]
    statuses = {("payment", PAYMENT): "refunded", ("refund", REFUND): "succeeded"}
    assert _judged([collected, refund], statuses, moved).count == 0
    statuses[("refund", REFUND)] = "failed"
    assert _judged([collected, refund], statuses, moved).breaches == {"paid_and_recredited": 1}


async def test_an_operation_pending_that_nobody_was_told_of_is_waited_on(runtime: Runtime) -> None:
    merchant = await make_merchant(runtime)
    async with runtime.engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO payouts (reference, merchant_id, livemode, status, amount, "
                "fee_amount, currency, operator, phone_number, third_party, created_at, "
                "updated_at) VALUES (:ref, :merchant, true, 'pending', 500, 0, 'XOF', 'mtn', "
                "'22997123456', true, now(), now())"
            ),
            {"ref": PAYOUT, "merchant": merchant.id},
        )
        await connection.execute(
            text(
                "INSERT INTO operator_operations (id, livemode, connector, operator, action, "
                "subject, subject_ref, request, created_at, updated_at) VALUES "
                "(gen_random_uuid(), true, 'mtn-sandbox', 'mtn', 'disburse', 'payout', :ref, "
                "'{}', now(), now())"
            ),
            {"ref": PAYOUT},
        )
        assert await waiting_untold(connection) == [("payout", PAYOUT)]
        await connection.execute(text("UPDATE operator_operations SET review_required_at = now()"))
        assert await waiting_untold(connection) == []
