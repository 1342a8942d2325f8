"""`cauri approvals list|approve|reject`: the live money actions above the platform's
`payout-dual-approval-above` that wait for a second person (credits, failed plans'
resolutions, a raise or an unset of that amount; cauri.staff.approvals). Held payouts have
their own commands (`cauri payouts approve|reject`), under the same rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.cli.acting import AsOption, TotpOption, acting
from cauri.cli.common import in_transaction
from cauri.cli.output import JsonFlag, echo_json, echo_table
from cauri.staff import actions, approvals

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


approvals_cli = typer.Typer(
    no_args_is_help=True, help="Live money actions waiting for a second person's approval."
)

_REASON = Annotated[str | None, typer.Option(help="Why; kept in the audit log.")]


@approvals_cli.command("list")
def approvals_list(as_json: JsonFlag = False) -> None:
    """The actions waiting, oldest first."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [approvals.row(pending) for pending in await approvals.waiting(session)]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no action awaits approval")
    else:
        columns = ("requested_at", "id", "kind", "subject", "amount", "currency")
        echo_table(rows, (*columns, "requested_by", "reason"))


def _decide(
    approval_id: str,
    reason: str | None,
    email: str | None,
    code: str | None,
    *,
    approve: bool,
    as_json: bool,
) -> None:
    decide = actions.approve_action if approve else actions.reject_action

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, email, code)
        return approvals.row(await decide(session, runtime, actor, approval_id, reason))

    shown = in_transaction(work)
    if as_json:
        echo_json(shown)
    else:
        typer.echo(f"{shown['kind']} {shown['subject']}: {shown['status']}")


@approvals_cli.command("approve")
def approvals_approve(
    approval_id: str,
    reason: _REASON = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Does the action, as it was asked, in your name: the second approval, by another
    staff account than the one that asked (--as EMAIL --totp CODE)."""
    _decide(approval_id, reason, as_email, totp_code, approve=True, as_json=as_json)


@approvals_cli.command("reject")
def approvals_reject(
    approval_id: str,
    reason: _REASON = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Drops the action: nothing was done, nothing is (the asker may withdraw it)."""
    _decide(approval_id, reason, as_email, totp_code, approve=False, as_json=as_json)
