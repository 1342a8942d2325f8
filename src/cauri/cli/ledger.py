"""`cauri ledger balances`, `cauri ledger check` and `cauri ledger close`: every account's
balance; the reconciliation check, run, recorded and printed (exit 1 when the ledger does not
reconcile); the period close (cauri.ledger.periods)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction, with_runtime
from cauri.cli.output import JsonFlag, echo_json, echo_table
from cauri.kit.money import to_major
from cauri.models import Reconciliation
from cauri.staff import actions, reconciliation

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


ledger_cli = typer.Typer(no_args_is_help=True, help="The ledger: balances and reconciliation.")


@ledger_cli.command("balances")
def ledger_balances(as_json: JsonFlag = False) -> None:
    """Every account's balance, by code: merchants' available balances and their plans'
    escrows (summed per merchant), platform revenue, top-up sources, operators' clearing
    (negative: money collected through them)."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [
            {
                "code": row.code,
                "kind": row.kind,
                "owner": row.owner,
                "mode": "live" if row.livemode else "test",
                "currency": row.currency,
                "balance": to_major(row.balance, row.currency),
                "accounts": row.accounts,
            }
            for row in await reconciliation.balances(session)
        ]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("the ledger is empty")
    else:
        echo_table(rows, ("kind", "owner", "mode", "currency", "balance", "accounts", "code"))


def _result(checked: Reconciliation) -> dict[str, Any]:
    return {
        "id": checked.id,
        "checked_at": checked.checked_at.isoformat(),
        "passed": checked.passed,
        "duration_ms": checked.duration_ms,
        "transactions": checked.transactions,
        "postings": checked.postings,
        "accounts": checked.accounts,
        "counts": checked.counts,
        # Amounts in the currency's unit, like the balances (stored in minor units).
        "discrepancies": [
            found
            | {
                "found": to_major(found["found"], found["currency"]),
                "expected": to_major(found["expected"], found["currency"]),
            }
            for found in checked.discrepancies
        ],
    }


@ledger_cli.command("check")
def ledger_check(as_json: JsonFlag = False) -> None:
    """Checks that every transaction sums to zero per currency, that every account head
    holds its folded postings, and that no account but an external one is negative; records
    the result with its date; exit 1 if the ledger does not reconcile."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        return _result(await actions.reconcile(session, runtime, Actor.cli()))

    result = in_transaction(work)
    if as_json:
        echo_json(result)
    else:
        verdict = "passed" if result["passed"] else "FAILED"
        typer.echo(f"reconciliation {verdict} at {result['checked_at']}")
        typer.echo(
            f"checked {result['transactions']} transactions, {result['postings']} postings, "
            f"{result['accounts']} account heads in {result['duration_ms']} ms"
        )
        typer.echo(", ".join(f"{name}: {count}" for name, count in result["counts"].items()))
        if result["discrepancies"]:
            typer.echo("first discrepancies:")
            echo_table(
                result["discrepancies"], ("check", "subject", "currency", "found", "expected"), "  "
            )
    if not result["passed"]:
        raise typer.Exit(1)


@ledger_cli.command("close")
def ledger_close(
    through: Annotated[str, typer.Option("--through", help="The last month closed, YYYY-MM.")],
    as_json: JsonFlag = False,
) -> None:
    """Closes the ledger's months up to --through (each once it has been over a week): their
    postings refuse back-dated writes and are folded into account heads, and what each
    account carries forward is recorded, so that `cauri archive` may take them."""
    from cauri.cli.history import parse_month

    month = parse_month(through, "--through")

    async def work(runtime: Runtime) -> dict[str, Any]:
        closed = await actions.close_ledger(runtime, Actor.cli(), month)
        return {"closed": [str(m) for m in closed.months], "accounts_folded": closed.folded}

    result = with_runtime(work)
    if as_json:
        echo_json(result)
    elif not result["closed"]:
        typer.echo(f"the ledger is closed through {month} already")
    else:
        typer.echo(
            f"closed {', '.join(result['closed'])} ({result['accounts_folded']} account(s) folded)"
        )
