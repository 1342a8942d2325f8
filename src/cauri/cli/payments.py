"""`cauri payments show`: a payment, whichever merchant's, with its refunds and what was
exchanged with the operator about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from cauri.cli.common import in_transaction
from cauri.cli.operations import echo_operations, operation_row
from cauri.cli.output import JsonFlag, echo_json, echo_table
from cauri.payments.schemas import payment_object
from cauri.refunds.schemas import refund_object
from cauri.staff.payment_overview import payment_overview

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


payments_cli = typer.Typer(no_args_is_help=True, help="Payments, across merchants.")

# What the text shows of the payment, in this order; a key the object lacks is left out.
_SHOWN = (
    "reference",
    "identifier",
    "external_id",
    "merchant_id",
    "livemode",
    "status",
    "failure_code",
    "failure_message",
    "amount",
    "fee_amount",
    "total_amount",
    "fee_bearer",
    "net_amount",
    "amount_refunded",
    "currency",
    "description",
    "created_at",
    "updated_at",
)


@payments_cli.command("show")
def payments_show(reference: str, as_json: JsonFlag = False) -> None:
    """The payment (by its reference or its CAU… identifier), its refunds, and its operator
    operations with their exchanges (`cauri exchanges list` shows their bodies)."""

    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        seen = await payment_overview(session, reference)
        return {
            "payment": payment_object(seen.payment) | {"merchant_id": seen.payment.merchant_id},
            "refunds": [refund_object(refund) for refund in seen.refunds],
            "operations": [operation_row(view) for view in seen.operations],
        }

    shown = in_transaction(work, read_only=True)
    if as_json:
        echo_json(shown)
        return
    payment = shown["payment"]
    for key in _SHOWN:
        if key in payment:
            typer.echo(f"{key}: {'-' if payment[key] is None else payment[key]}")
    typer.echo(f"operator: {payment['payment_mode']['operator']}")
    customer = {k: v for k, v in payment["customer"].items() if v is not None}
    typer.echo("customer: " + (", ".join(f"{k}={v}" for k, v in customer.items()) or "-"))
    if shown["refunds"]:
        typer.echo("refunds:")
        columns = ("reference", "status", "amount", "currency", "reason", "created_at")
        echo_table(shown["refunds"], (*columns, "completed_at"), "  ")
    else:
        typer.echo("refunds: none")
    typer.echo("operator operations:")
    echo_operations(
        shown["operations"], False, "none (the test-mode simulator leaves none)", bodies=False
    )
