"""`cauri reconcile`: operators' statements against Cauri's operations and the ledger
(cauri.reconciliation): import a statement file, run a day, work through the discrepancies."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.common import in_transaction, with_runtime
from cauri.cli.output import JsonFlag, echo_json, echo_record, echo_table

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.reconciliation.imports import Imported
    from cauri.runtime import Runtime


reconcile_cli = typer.Typer(
    no_args_is_help=True, help="Operators' statements against Cauri's operations and ledger."
)


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            "a date, YYYY-MM-DD (the platform's: CAURI_TIME_ZONE)", param_hint="--date"
        ) from None


@reconcile_cli.command("import")
def import_statement(
    connector: Annotated[str, typer.Argument(help="The connector account's name.")],
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, readable=True, help="The statement.")
    ],
    format_name: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="cauri (Cauri's own CSV), pawapay or wave; by default the operator's own, "
            "else cauri.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Imports a statement file in the operator's own format, or in Cauri's own CSV for an
    operator that publishes none (docs/OPERATORS.md, "Statements"); the same file twice is
    refused."""
    from cauri.reconciliation.days import Days
    from cauri.reconciliation.imports import import_file

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        now = runtime.clock.now()
        return _imported(
            await import_file(
                session,
                connector,
                file,
                Actor.cli(),
                now,
                Days(runtime.settings.zone),
                format_name=format_name,
            )
        )

    echo_record(in_transaction(work), as_json)


def _imported(imported: Imported) -> dict[str, Any]:
    return {
        "statement": str(imported.statement_id),
        "connector": imported.connector,
        "format": imported.format,
        "lines": imported.lines,
        "first_day": None if imported.first_day is None else imported.first_day.isoformat(),
        "last_day": None if imported.last_day is None else imported.last_day.isoformat(),
    }


@reconcile_cli.command("fetch")
def fetch_statement(
    connector: Annotated[str, typer.Argument(help="The connector account's name.")],
    day: Annotated[
        str, typer.Option("--date", help="The day, YYYY-MM-DD (CAURI_TIME_ZONE's, UTC unless set).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Fetches the day's statement through the operator's API, where it has one (Wave), and
    imports it; a day fetched already is refused."""
    from cauri.reconciliation.sources import fetch

    on = _day(day)

    async def work(runtime: Runtime) -> dict[str, Any]:
        return _imported(await fetch(runtime, Actor.cli(), connector, on))

    echo_record(with_runtime(work), as_json)


@reconcile_cli.command("balances")
def operator_balances(
    connector: Annotated[str, typer.Argument(help="The connector account's name.")],
    as_json: JsonFlag = False,
) -> None:
    """The connector account's wallet balance now, per currency, as the operator's API gives
    it (MTN MoMo, pawaPay, Wave, CinetPay's transfer balance; docs/OPERATORS.md), beside the
    ledger's wallet of the connector account."""
    from cauri.kit.money import to_major
    from cauri.reconciliation.balances import compared

    async def work(runtime: Runtime) -> list[dict[str, Any]]:
        return [
            {
                "connector": connector,
                "currency": found.currency,
                "operator": to_major(found.operator, found.currency),
                "cauri": to_major(found.cauri, found.currency),
                "difference": to_major(found.difference, found.currency),
            }
            for found in await compared(runtime, connector)
        ]

    rows = with_runtime(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no balance")
    else:
        echo_table(rows, ("currency", "operator", "cauri", "difference"))


@reconcile_cli.command("run")
def run_day(
    connector: Annotated[str, typer.Argument(help="The connector account's name.")],
    day: Annotated[
        str, typer.Option("--date", help="The day, YYYY-MM-DD (CAURI_TIME_ZONE's, UTC unless set).")
    ],
    as_json: JsonFlag = False,
) -> None:
    """Matches the day's statement lines to Cauri's operations and the ledger, and records
    what differs; a rerun adds only what is new and closes what is gone."""
    from cauri.reconciliation.days import Days
    from cauri.reconciliation.runs import reconcile_day

    on = _day(day)

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        run = await reconcile_day(
            session, Actor.cli(), connector, on, runtime.clock.now(), Days(runtime.settings.zone)
        )
        return {
            "connector": run.connector,
            "day": run.day.isoformat(),
            "lines": run.lines,
            "matched": run.matched,
            "discrepancies": run.found,
            "new": run.added,
            "closed": run.closed,
            "asked_again": run.asked,
            "booked": run.booked,
        }

    echo_record(in_transaction(work), as_json)


@reconcile_cli.command("list")
def list_discrepancies(
    connector: Annotated[str | None, typer.Option("--connector")] = None,
    day: Annotated[
        str | None, typer.Option("--date", help="YYYY-MM-DD (CAURI_TIME_ZONE's, UTC unless set).")
    ] = None,
    kind: Annotated[str | None, typer.Option("--kind")] = None,
    include_resolved: Annotated[bool, typer.Option("--all", help="Resolved ones too.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Discrepancies still open (with --all, resolved ones too), oldest day first."""
    from cauri.reconciliation import service

    filters = service.Filters(
        connector=connector,
        day=None if day is None else _day(day),
        kind=kind,
        open_only=not include_resolved,
    )

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [service.summary(found) for found in await service.listed(session, filters)]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no discrepancy")
    else:
        echo_table(rows, ("id", "day", "connector", "kind", "currency", "details", "resolution"))


@reconcile_cli.command("show")
def show_discrepancy(discrepancy_id: int, as_json: JsonFlag = False) -> None:
    """One discrepancy with both sides: the statement's line and Cauri's operation."""
    from cauri.reconciliation import service

    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        return await service.detail(session, discrepancy_id)

    echo_record(in_transaction(work), as_json)


@reconcile_cli.command("resolve")
def resolve_discrepancy(
    discrepancy_id: int,
    reason: Annotated[str, typer.Option("--reason", help="What resolves it.")],
    book: Annotated[
        list[str] | None,
        typer.Option(
            "--book",
            help="A part of the correcting entry, COUNTERPART=AMOUNT in major units, "
            "negative when taken from it (merchant:ID, fees, operator_costs, suspense, "
            "clearing:OPERATOR); repeated for several. The wallet takes the rest.",
        ),
    ] = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Closes a discrepancy with what was found, in the audit log; with --book, the money
    it moves too. A correction above the platform's `payout-dual-approval-above` is only
    asked: a second person approves it (`cauri approvals approve`)."""
    from cauri.models import MoneyApproval
    from cauri.reconciliation import service
    from cauri.staff import actions

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        done = await actions.resolve_discrepancy(
            session, runtime, actor, discrepancy_id, reason, book or ()
        )
        if isinstance(done, MoneyApproval):
            return held(done)
        return await service.detail(session, done.id)

    echo_record(in_transaction(work), as_json)
