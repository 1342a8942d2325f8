"""`cauri plans resolve`: the staff's way out for a plan whose cancellation refund failed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.common import in_transaction
from cauri.cli.output import JsonFlag, echo_json
from cauri.kit.money import to_major
from cauri.models import MoneyApproval
from cauri.plans.schemas import plan_object
from cauri.staff import actions

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


plans_cli = typer.Typer(no_args_is_help=True, help="Installment plans.")


@plans_cli.command("resolve")
def plans_resolve(
    reference: str,
    refund_to: Annotated[
        str | None, typer.Option(help="A Mobile Money number to send the escrow to.")
    ] = None,
    operator: Annotated[
        str | None, typer.Option(help="Its operator code (with --refund-to).")
    ] = None,
    release_to_merchant: Annotated[
        bool, typer.Option("--release-to-merchant", help="Credit the merchant's balance.")
    ] = False,
    reason: Annotated[
        str | None, typer.Option(help="Why (required with --release-to-merchant).")
    ] = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Moves what a failed plan's escrow holds: a new refund to --refund-to by --operator (the
    plan becomes `refunded` when it succeeds), or --release-to-merchant with a --reason. A
    live escrow above the platform's payout-dual-approval-above is only asked (--as and
    --totp required) and moved on a second person's approval (`cauri approvals approve`)."""
    if release_to_merchant == (refund_to is not None):
        raise typer.BadParameter(
            "give either --refund-to (with --operator) or --release-to-merchant"
        )
    if refund_to is not None and operator is None:
        raise typer.BadParameter("--refund-to needs --operator", param_hint="--operator")

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        if refund_to is not None and operator is not None:
            done = await actions.refund_plan_to(
                session,
                runtime,
                actor,
                reference,
                phone_number=refund_to,
                operator=operator,
                reason=reason,
            )
            if isinstance(done, MoneyApproval):
                return held(done)
            plan, refund = done
            sent = {
                "reference": refund.reference,
                "status": refund.status,
                "amount": to_major(refund.amount, refund.currency),
                "operator": refund.operator,
                "phone_number": refund.phone_number,
                "failure_code": refund.failure_reason,
            }
            return {"plan": plan_object(plan), "refund": sent}
        released = await actions.release_plan_to_merchant(
            session, runtime, actor, reference, reason=reason or ""
        )
        if isinstance(released, MoneyApproval):
            return held(released)
        return {"plan": plan_object(released), "refund": None}

    result = in_transaction(work)
    if as_json:
        echo_json(result)
        return
    if "pending_approval" in result:
        typer.echo(f"pending approval {result['pending_approval']['id']}: {result['next']}")
        return
    plan = result["plan"]
    typer.echo(f"plan {plan['reference']}: {plan['status']}, resolution {plan['resolution']}")
    if result["refund"] is not None:
        refund = result["refund"]
        typer.echo(
            f"refund {refund['reference']}: {refund['status']} {refund['amount']} "
            f"to {refund['phone_number']} ({refund['operator']})"
        )
