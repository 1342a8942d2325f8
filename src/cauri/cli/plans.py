"""`cauri plans resolve`: the staff's way out for a plan whose cancellation refund failed."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.cli.output import JsonFlag, echo_json, in_transaction
from cauri.kit.money import to_major
from cauri.plans.schemas import plan_object
from cauri.runtime import Runtime
from cauri.staff import actions

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
    as_json: JsonFlag = False,
) -> None:
    """Moves what a failed plan's escrow holds: a new refund to --refund-to by --operator (the
    plan becomes `refunded` when it succeeds), or --release-to-merchant with a --reason."""
    if release_to_merchant == (refund_to is not None):
        raise typer.BadParameter(
            "give either --refund-to (with --operator) or --release-to-merchant"
        )
    if refund_to is not None and operator is None:
        raise typer.BadParameter("--refund-to needs --operator", param_hint="--operator")

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        if refund_to is not None and operator is not None:
            plan, refund = await actions.refund_plan_to(
                session,
                runtime,
                Actor.cli(),
                reference,
                phone_number=refund_to,
                operator=operator,
                reason=reason,
            )
            sent = {
                "reference": refund.reference,
                "status": refund.status,
                "amount": to_major(refund.amount, refund.currency),
                "operator": refund.operator,
                "phone_number": refund.phone_number,
                "failure_code": refund.failure_reason,
            }
            return {"plan": plan_object(plan), "refund": sent}
        plan = await actions.release_plan_to_merchant(
            session, runtime, Actor.cli(), reference, reason=reason or ""
        )
        return {"plan": plan_object(plan), "refund": None}

    result = in_transaction(work)
    if as_json:
        echo_json(result)
        return
    plan = result["plan"]
    typer.echo(f"plan {plan['reference']}: {plan['status']}, resolution {plan['resolution']}")
    if result["refund"] is not None:
        refund = result["refund"]
        typer.echo(
            f"refund {refund['reference']}: {refund['status']} {refund['amount']} "
            f"to {refund['phone_number']} ({refund['operator']})"
        )
