"""Payout batches uploaded on the dashboard as a CSV file (read by
cauri.payout_batches.files), with maker-checker inside the merchant's team, as single payouts
have it (cauri.team.drafts).

A live file whose items add up above the amount the owner set
(`Merchant.team_approval_above`) is a draft: no batch, nothing paid, until a second member
who moves money approves it (cauri.team.second_approval). Approved, it becomes a batch
through `payout_batches.create`, its items those of the file as stored and shown, with the
draft's reference as its `external_id` (so that an approval repeated makes one batch); each
item is then an ordinary payout, with every rule of the API. Test files, and live ones at or
below the threshold, are batches at once, named by their bytes: the same file sent twice is
one batch. Every upload and decision is audited with the member as its actor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import record
from cauri.kit import strict_json
from cauri.kit.errors import CauriError, Conflict, InvalidRequest
from cauri.kit.ids import prefixed
from cauri.kit.money import format_major, to_minor
from cauri.merchants.caller import Caller
from cauri.models import Merchant, PayoutBatch, PayoutBatchDraft
from cauri.payout_batches import files
from cauri.payout_batches.schemas import PayoutBatchCreate
from cauri.payout_batches.service import payout_batches
from cauri.payouts.schemas import PayoutCreate
from cauri.runtime import Runtime
from cauri.team.second_approval import APPROVED, AWAITING, DraftKind

CREATE_BATCH = "payout_batch.create"
CREATE = "payout_batch_draft.create"
_NAME_MAX = 255


def draft_row(draft: PayoutBatchDraft) -> dict[str, Any]:
    """A batch draft as the audit log shows it (its file's content is the draft's page's)."""
    return {
        "reference": draft.reference,
        "status": draft.status,
        "file_name": draft.file_name,
        "items": draft.item_count,
        "amount": format_major(draft.amount, "XOF"),
        "created_by": draft.created_by_email,
        "decided_by": draft.decided_by_email,
    }


DRAFTS = DraftKind(
    PayoutBatchDraft, "payout_batch_draft", draft_row, "Transfert groupé introuvable"
)


async def ask(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    caller: Caller,
    file_name: str,
    raw: bytes,
) -> tuple[PayoutBatch, bool] | PayoutBatchDraft:
    """The file's batch (False: the same file's, sent before), or its draft when the
    team's second approval is needed. A file that cannot be read, or a batch refused whole
    (no item, too many), is refused; an item refused is the batch's to report."""
    if not file_name.lower().endswith(".csv"):
        raise InvalidRequest("Le fichier doit être un CSV (nom en .csv).")
    if strict_json.unstorable(file_name):
        raise InvalidRequest("Le nom du fichier contient un caractère interdit.")
    content = files.text_of(raw)
    items = files.csv_items(content)
    body = PayoutBatchCreate.of({"external_id": files.named_by_bytes(raw), "items": items})
    merchant = await session.get(Merchant, caller.merchant_id)
    assert merchant is not None  # the member's own merchant
    threshold = merchant.team_approval_above if caller.livemode else None
    amount = _asked(body.items)
    if threshold is not None and amount > threshold:
        assert actor.staff_account_id is not None  # a member always has an account
        values = {
            "reference": prefixed("pbd"),
            "merchant_id": caller.merchant_id,
            "external_id": body.external_id,
            "file_name": file_name[-_NAME_MAX:],
            "file_text": content,
            "item_count": len(body.items),
            "amount": amount,
            "own_account": _own_account(merchant),
            "status": AWAITING,
            "created_by": actor.staff_account_id,
            "created_by_email": actor.name,
            "created_at": runtime.clock.now(),
        }
        return await _draft(session, actor, values)
    return await _make(session, runtime, actor, caller, body)


def _asked(items: Sequence[Any]) -> int:
    """What the items ask to send, in francs CFA (XOF and XAF at par: the unit of the
    owner's threshold), fees aside: each item that reads as a payout request; one that does
    not is refused by the batch and sends nothing."""
    total = 0
    for item in items:
        try:
            total += to_minor(PayoutCreate.model_validate(item).amount, "XOF")
        except (ValidationError, CauriError):
            continue
    return total


def _own_account(merchant: Merchant) -> str | None:
    """The validated payout account an item without a number is paid to, if any."""
    if merchant.payout_validated and merchant.payout_phone and merchant.payout_operator:
        return f"{merchant.payout_operator} {merchant.payout_phone}"
    return None


async def _draft(session: AsyncSession, actor: Actor, values: dict[str, Any]) -> PayoutBatchDraft:
    # The same file sent again while its draft awaits (a double click): that draft.
    statement = (
        insert(PayoutBatchDraft)
        .values(values)
        .on_conflict_do_nothing(
            index_elements=["merchant_id", "external_id"], index_where=text("status = 'awaiting'")
        )
        .returning(PayoutBatchDraft)
    )
    draft = (await session.scalars(statement)).one_or_none()
    if draft is None:
        awaiting = select(PayoutBatchDraft).where(
            PayoutBatchDraft.merchant_id == values["merchant_id"],
            PayoutBatchDraft.external_id == values["external_id"],
            PayoutBatchDraft.status == AWAITING,
        )
        return (await session.scalars(awaiting)).one()
    after = draft_row(draft)
    at = draft.created_at
    await record(session, actor, CREATE, "payout_batch_draft", draft.reference, None, after, at=at)
    return draft


async def _make(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, body: PayoutBatchCreate
) -> tuple[PayoutBatch, bool]:
    """The batch, audited when made (a file sent again is the first one's batch, audited
    then)."""
    batch, created = await payout_batches.create(session, runtime, caller, body)
    if created:
        after = {
            "livemode": batch.livemode,
            "external_id": batch.external_id,
            "items": len(body.items),
        }
        at = runtime.clock.now()
        await record(
            session, actor, CREATE_BATCH, "payout_batch", batch.reference, None, after, at=at
        )
    return batch, created


async def approve(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, reference: str
) -> PayoutBatch:
    """The second member's approval: the draft becomes its batch, whose items the worker
    makes into payouts (one refused, by a cap or the balance, is the batch's to report)."""
    draft = await DRAFTS.approvable(session, runtime, actor, caller.merchant_id, reference)
    items = files.csv_items(draft.file_text)
    await _unchanged(session, caller, draft, items)
    await DRAFTS.decide(session, runtime, actor, draft, APPROVED)
    body = PayoutBatchCreate.of({"external_id": draft.reference, "items": items})
    batch, _ = await _make(session, runtime, actor, caller, body)
    return batch


async def _unchanged(
    session: AsyncSession, caller: Caller, draft: PayoutBatchDraft, items: Sequence[Any]
) -> None:
    """Refuses an approval of something else than what was asked and shown: items without a
    number would now go to another account (the validated one changed), or the draft's
    reference is already another batch's `external_id`."""
    merchant = await session.get(Merchant, caller.merchant_id)
    assert merchant is not None
    to_own = any(isinstance(item, dict) and "phone_number" not in item for item in items)
    if to_own and _own_account(merchant) != draft.own_account:
        raise Conflict(
            "Le compte de transfert a changé depuis l'envoi du fichier : rejetez ce transfert "
            "groupé et envoyez le fichier de nouveau."
        )
    taken = select(PayoutBatch.reference).where(
        PayoutBatch.merchant_id == caller.merchant_id,
        PayoutBatch.livemode == caller.livemode,
        PayoutBatch.external_id == draft.reference,
    )
    if await session.scalar(taken) is not None:
        raise Conflict(f"Un autre lot porte déjà la référence {draft.reference}.")
