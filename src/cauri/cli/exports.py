"""`cauri export payments|payouts|refunds --from --to [--merchant] [--mode]`: CSV on stdout,
streamed as it is read (cauri.staff.exports); each export is in the audit log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Annotated

import typer

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction, livemode_of
from cauri.kit.db import unit_of_work
from cauri.kit.period import Period
from cauri.staff import actions, exports
from cauri.staff.exports import ExportFilter

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


export_cli = typer.Typer(
    no_args_is_help=True, help="CSV exports of payments, payouts and refunds for a period."
)

Start = Annotated[str, typer.Option("--from", help="Created from: an ISO 8601 date or timestamp.")]
End = Annotated[
    str, typer.Option("--to", help="Created until: an ISO 8601 date (the whole day) or timestamp.")
]
MerchantId = Annotated[str | None, typer.Option("--merchant", help="Only this merchant's (id).")]
Mode = Annotated[str | None, typer.Option(help="test or live; both if omitted.")]


def _export(
    kind: str,
    lines: Callable[[AsyncSession, ExportFilter], AsyncIterator[str]],
    start: str,
    end: str,
    merchant: str | None,
    mode: str | None,
) -> None:

    livemode = None if mode is None else livemode_of(mode)

    async def work(session: AsyncSession, runtime: Runtime) -> None:
        # Parsed here: a bad date is the same error envelope as the API's.
        wanted = ExportFilter(Period.parse(start, end), merchant, livemode)
        read = lines(session, wanted)
        first = await anext(read)  # an unknown merchant is refused before anything is recorded
        # Recorded in a transaction of its own, as the console does: the entry holds the audit
        # log's chain until its transaction ends (cauri.audit.chain), not while the file is
        # written.
        async with unit_of_work(runtime.sessionmaker) as recording:
            await actions.record_export(
                recording, runtime, Actor.cli(), actions.EXPORT_DATA, kind, wanted
            )
        typer.echo(first, nl=False)
        async for line in read:
            typer.echo(line, nl=False)

    in_transaction(work)


@export_cli.command("payments")
def export_payments(start: Start, end: End, merchant: MerchantId = None, mode: Mode = None) -> None:
    """Payments created in the period (plans' instalments included), oldest first."""
    _export("payments", exports.payments, start, end, merchant, mode)


@export_cli.command("payouts")
def export_payouts(start: Start, end: End, merchant: MerchantId = None, mode: Mode = None) -> None:
    """Payouts created in the period, oldest first."""
    _export("payouts", exports.payouts, start, end, merchant, mode)


@export_cli.command("refunds")
def export_refunds(start: Start, end: End, merchant: MerchantId = None, mode: Mode = None) -> None:
    """Refunds created in the period, oldest first."""
    _export("refunds", exports.refunds, start, end, merchant, mode)
