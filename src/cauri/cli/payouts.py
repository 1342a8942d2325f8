"""`cauri payouts list`: payouts across merchants, those held for approval first among the
staff's concerns (`--awaiting-approval`, then `cauri payouts approve|reject`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.cli.output import JsonFlag, echo_json, echo_table, in_transaction
from cauri.kit.period import Period
from cauri.payouts.schemas import payout_object
from cauri.runtime import Runtime
from cauri.staff import reads


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
        return [
            payout_object(payout) | {"merchant_id": payout.merchant_id, "approval": payout.approval}
            for payout in await reads.payouts(session, wanted)
        ]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no payout awaits approval" if awaiting_approval else "no payout")
    else:
        echo_table(
            [row | {"mode": "live" if row["livemode"] else "test"} for row in rows],
            (
                "created_at",
                "reference",
                "merchant_id",
                "mode",
                "status",
                "approval",
                "amount",
                "fee_amount",
                "currency",
                "operator",
                "phone_number",
            ),
        )
