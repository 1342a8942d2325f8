"""`cauri payouts list`: payouts across merchants, those held for approval first among the
staff's concerns (`--awaiting-approval`, then `cauri payouts approve|reject`), with the
approvals each has (above the platform's dual-approval amount, two are needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.cli.output import JsonFlag, echo_json, echo_table, in_transaction
from cauri.kit.period import Period
from cauri.models import Payout, PayoutApproval
from cauri.payouts.schemas import payout_object
from cauri.payouts.service import payouts
from cauri.runtime import Runtime
from cauri.staff import reads


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
    from cauri.cli import _livemode

    livemode = None if mode is None else _livemode(mode)

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
