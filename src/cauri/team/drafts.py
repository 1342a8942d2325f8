"""Payouts asked for on the dashboard, with maker-checker inside the merchant's team.

A live payout above the amount the owner set (`Merchant.team_approval_above`) is a draft:
not a payout of the API, not debited, not counted in any cap, until a second member of the
team who moves money approves it. Approved, it becomes an ordinary payout through
`payouts.create`, with the draft's reference as its `external_id` (so that the draft finds
its payout, and an approval repeated makes one payout), and the platform's own approval may
still hold it. The two people follow the team's rules of maker-checker
(cauri.team.second_approval). Test payouts, and live ones at or below the threshold, are
payouts at once. Every step is audited with the member as its actor.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import audited, record
from cauri.kit.errors import Conflict, InvalidRequest, PayoutFailed
from cauri.kit.ids import prefixed
from cauri.kit.money import EXPONENT, format_major, to_minor
from cauri.kit.phone import mask
from cauri.merchants.caller import Caller
from cauri.models import Merchant, Payout, PayoutDraft
from cauri.payouts.schemas import PayoutCreate, payout_object
from cauri.payouts.service import Quote, check_per_payout, payouts
from cauri.runtime import Runtime
from cauri.team.second_approval import APPROVED, AWAITING, DraftKind

CREATE_PAYOUT = "payout.create"
CREATE = "payout_draft.create"
SET_THRESHOLD = "team.payout_threshold"
_THRESHOLD = "team_approval_above"
# What a merchant's amounts admit (15 digits, as the API's).
_AMOUNT_LIMIT = Decimal(10) ** 15


async def ask(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, body: PayoutCreate
) -> Payout | PayoutDraft:
    """The payout, or its draft when the team's second approval is needed. A request
    without an `external_id` gets one: asked twice, it is one payout or one draft, and a
    refused one is found again to be audited."""
    if body.external_id is None:
        body = body.model_copy(update={"external_id": prefixed("dsh")})
    merchant = await session.get(Merchant, caller.merchant_id)
    threshold = merchant.team_approval_above if merchant and caller.livemode else None
    if threshold is not None:
        quote = await payouts.quote(session, caller, body)
        if quote.amount > threshold:
            if quote.merchant is not None:  # a refusal known now is said now
                check_per_payout(quote.merchant, quote.amount, quote.beneficiary.mode.currency)
            return await _draft(session, runtime, actor, caller, body, quote)
    return await _pay(session, runtime, actor, caller, body)


async def _pay(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, body: PayoutCreate
) -> Payout:
    """The payout, audited; one its operator refused is kept failed (as through the API)
    and audited too, found by its `external_id` (the form's, or the draft's reference)."""
    try:
        payout, created = await payouts.create(session, runtime, caller, body)
    except PayoutFailed:
        if body.external_id is not None:
            failed = await payouts.get(session, caller, body.external_id)
            await _record_payout(session, runtime, actor, failed, body.reason)
        raise
    if created:  # a request sent again is the first one's payout, audited then
        await _record_payout(session, runtime, actor, payout, body.reason)
    return payout


async def _record_payout(
    session: AsyncSession, runtime: Runtime, actor: Actor, payout: Payout, reason: str | None
) -> None:
    after = payout_object(payout)
    at = runtime.clock.now()
    await record(
        session, actor, CREATE_PAYOUT, "payout", payout.reference, None, after, reason, at=at
    )


async def _draft(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    caller: Caller,
    body: PayoutCreate,
    quote: Quote,
) -> PayoutDraft:
    assert actor.staff_account_id is not None  # a member always has an account
    values = {
        "reference": prefixed("pdr"),
        "merchant_id": caller.merchant_id,
        "external_id": body.external_id,
        # The amount is the row's (a JSON text would not be the API's JSON number).
        "request": body.model_dump(mode="json", exclude_none=True, exclude={"amount"}),
        "amount": quote.amount,
        "fee_amount": quote.fee,
        "currency": quote.beneficiary.mode.currency,
        "operator": quote.beneficiary.mode.operator,
        "phone_number": quote.beneficiary.phone_number,
        "third_party": quote.beneficiary.third_party,
        "status": AWAITING,
        "created_by": actor.staff_account_id,
        "created_by_email": actor.name,
        "created_at": runtime.clock.now(),
    }
    # A request sent twice (its external_id taken): the first one's draft.
    statement = (
        insert(PayoutDraft)
        .values(values)
        .on_conflict_do_nothing(index_elements=["merchant_id", "external_id"])
        .returning(PayoutDraft)
    )
    draft = (await session.scalars(statement)).one_or_none()
    if draft is None:
        taken = select(PayoutDraft).where(
            PayoutDraft.merchant_id == caller.merchant_id,
            PayoutDraft.external_id == body.external_id,
        )
        return (await session.scalars(taken)).one()
    after = draft_row(draft)
    at = draft.created_at
    await record(session, actor, CREATE, "payout_draft", draft.reference, None, after, at=at)
    return draft


def draft_row(draft: PayoutDraft) -> dict[str, Any]:
    """A draft as the audit log shows it (the beneficiary's number masked, as a payout's)."""
    return {
        "reference": draft.reference,
        "status": draft.status,
        "amount": format_major(draft.amount, draft.currency),
        "fee_amount": format_major(draft.fee_amount, draft.currency),
        "currency": draft.currency,
        "operator": draft.operator,
        "phone_number": mask(draft.phone_number),
        "created_by": draft.created_by_email,
        "decided_by": draft.decided_by_email,
    }


DRAFTS = DraftKind(PayoutDraft, "payout_draft", draft_row, "Brouillon de transfert introuvable")


async def approve(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, reference: str
) -> Payout:
    """The second member's approval: the draft becomes its payout, or stays a draft when
    the payout is refused before anything is written (the balance no longer covers it, a
    cap would be passed); an operator's refusal is a failed payout, as through the API."""
    draft = await DRAFTS.approvable(session, runtime, actor, caller.merchant_id, reference)
    amount = Decimal(draft.amount).scaleb(-EXPONENT[draft.currency])
    body = PayoutCreate.model_validate(
        draft.request | {"amount": amount, "external_id": draft.reference}
    )
    await _unchanged(session, caller, draft, body)
    await DRAFTS.decide(session, runtime, actor, draft, APPROVED)
    return await _pay(session, runtime, actor, caller, body)


async def _unchanged(
    session: AsyncSession, caller: Caller, draft: PayoutDraft, body: PayoutCreate
) -> None:
    """Refuses an approval of something else than what was asked and shown: the payout
    would now go to another number (the validated account changed), or cost another fee;
    or the draft's reference is already another payout's `external_id`."""
    quote = await payouts.quote(session, caller, body)
    now = (quote.beneficiary.phone_number, quote.beneficiary.mode.operator, quote.fee)
    if now != (draft.phone_number, draft.operator, draft.fee_amount):
        raise Conflict(
            "Le transfert a changé depuis la demande (compte de transfert ou frais) : "
            "rejetez ce brouillon et demandez-en un nouveau."
        )
    taken = select(Payout.reference).where(
        Payout.merchant_id == caller.merchant_id,
        Payout.livemode == caller.livemode,
        Payout.external_id == draft.reference,
    )
    if await session.scalar(taken) is not None:
        raise Conflict(f"Un autre transfert porte déjà la référence {draft.reference}.")


async def set_threshold(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    amount: Decimal | None,
) -> Merchant:
    """The owner's threshold, in major units of XOF/XAF (the merchant's limits' unit);
    empty: no second approval."""
    merchant = await session.get(Merchant, merchant_id, with_for_update={"key_share": True})
    assert merchant is not None  # the member's own merchant
    value = None if amount is None else _threshold(amount)

    async def state() -> dict[str, Any]:
        return {"team_approval_above": merchant.team_approval_above}

    async def change() -> Merchant:
        merchant.team_approval_above = value
        return merchant

    resource = ("merchant", merchant_id)
    return await audited(
        session, actor, SET_THRESHOLD, resource, state, change, at=runtime.clock.now()
    )


def _threshold(amount: Decimal) -> int:
    if not 0 < amount < _AMOUNT_LIMIT:
        raise InvalidRequest.field(_THRESHOLD, "Le seuil est un montant positif.")
    return to_minor(amount, "XOF", field=_THRESHOLD)
