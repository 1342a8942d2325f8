"""`cauri payouts list`: payouts across merchants, those held for approval first among the
staff's concerns (`--awaiting-approval`, then `cauri payouts approve|reject`), with the
approvals each has (above the platform's dual-approval amount, two are needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli import payout_batches
from cauri.cli.acting import AsOption, TotpOption, acting
from cauri.cli.common import in_transaction, livemode_of
from cauri.cli.output import JsonFlag, echo_json, echo_record, echo_table
from cauri.kit.period import Period
from cauri.payouts.schemas import payout_object
from cauri.payouts.service import payouts
from cauri.staff import actions, reads

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.models import Payout, PayoutApproval
    from cauri.runtime import Runtime


def payout_row(payout: Payout, approvals: Sequence[PayoutApproval]) -> dict[str, Any]:
    """What the staff see of a payout: the merchant's view, its approval state and who
    approved it, oldest first."""
    return payout_object(payout) | {
        "merchant_id": payout.merchant_id,
        "approval": payout.approval,
        "approvals": [
            {"by": approval.approver_name, "at": approval.at.isoformat()}
            for approval in approvals
            if approval.payout_reference == payout.reference
        ],
    }


def payouts_list(
    awaiting_approval: Annotated[
        bool,
        typer.Option(
            "--awaiting-approval", help="Only those held for `cauri payouts approve|reject`."
        ),
    ] = False,
    merchant: Annotated[str | None, typer.Option(help="Only this merchant's (its id).")] = None,
    status: Annotated[str | None, typer.Option(help="pending, succeeded or failed.")] = None,
    mode: Annotated[str | None, typer.Option(help="test or live; both if omitted.")] = None,
    start: Annotated[
        str | None, typer.Option("--from", help="Created from: an ISO 8601 date or timestamp.")
    ] = None,
    end: Annotated[
        str | None, typer.Option("--to", help="Created until: an ISO 8601 date or timestamp.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 50,
    as_json: JsonFlag = False,
) -> None:
    """Payouts of every merchant, newest first."""

    livemode = None if mode is None else livemode_of(mode)

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        wanted = reads.PayoutFilter(
            merchant_id=merchant,
            awaiting_approval=awaiting_approval,
            status=status,
            livemode=livemode,
            # Parsed here: a bad date is the same error envelope as the API's.
            period=Period.parse(start, end),
            limit=limit,
        )
        found = await reads.payouts(session, wanted)
        approvals = await payouts.approvals_of(session, [payout.reference for payout in found])
        return [payout_row(payout, approvals) for payout in found]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no payout awaits approval" if awaiting_approval else "no payout")
    else:
        echo_table(
            [
                row
                | {
                    "mode": "live" if row["livemode"] else "test",
                    "approved_by": ", ".join(approval["by"] for approval in row["approvals"]),
                }
                for row in rows
            ],
            (
                "created_at",
                "reference",
                "merchant_id",
                "mode",
                "status",
                "approval",
                "approved_by",
                "amount",
                "fee_amount",
                "currency",
                "operator",
                "phone_number",
            ),
        )


payouts_cli = typer.Typer(
    no_args_is_help=True, help="Payouts: those held for approval, and batches of payouts."
)
payouts_cli.command("list")(payouts_list)
payouts_cli.command("batch")(payout_batches.payouts_batch)
payouts_cli.command("batch-show")(payout_batches.payouts_batch_show)
payouts_cli.command("batch-resume")(payout_batches.payouts_batch_resume)


_DECISION_REASON = Annotated[str | None, typer.Option(help="Why; kept in the audit log.")]


@payouts_cli.command("approve")
def payouts_approve(
    reference: str,
    reason: _DECISION_REASON = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Debits the balance and hands the payout to the worker to send. Above the platform's
    `payout-dual-approval-above`, only the second approval, by someone else, does; each of
    the two names its staff account (--as EMAIL --totp CODE)."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        payout = await actions.approve_payout(session, runtime, actor, reference, reason)
        return payout_row(payout, await payouts.approvals(session, reference))

    echo_record(in_transaction(work), as_json)


@payouts_cli.command("reject")
def payouts_reject(
    reference: str, reason: _DECISION_REASON = None, as_json: JsonFlag = False
) -> None:
    """Fails the payout; nothing was debited."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        payout = await actions.reject_payout(session, runtime, Actor.cli(), reference, reason)
        return payout_row(payout, await payouts.approvals(session, reference))

    echo_record(in_transaction(work), as_json)
