"""`cauri search payments|plans|payouts|refunds`: the staff's search across merchants
(cauri.staff.search), a page at a time, newest first. Each row is the resource as the API
shows it, with its `merchant_id`; `--json` prints `{data, meta}` as the API's lists do."""

# Without `from __future__ import annotations`: `_command` builds each command's options,
# one help depending on the kind, and Typer reads them from annotations evaluated there.

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.cli.common import in_transaction, livemode_of
from cauri.cli.output import JsonFlag, echo_json, echo_table
from cauri.kit.pagination import MAX_PAGE, Page, listing
from cauri.kit.period import Period
from cauri.models import InstallmentPlan, Payment, Payout, Refund
from cauri.payments.schemas import payment_object
from cauri.payouts.schemas import payout_object
from cauri.plans.schemas import plan_object
from cauri.refunds.schemas import refund_object
from cauri.runtime import Runtime
from cauri.staff import search
from cauri.staff.search import SearchFilter

Row = TypeVar("Row")

search_cli = typer.Typer(
    no_args_is_help=True, help="Search payments, plans, payouts and refunds across merchants."
)

Reference = Annotated[
    str | None, typer.Option(help="Its reference (a payment's CAU… identifier too).")
]
MerchantId = Annotated[str | None, typer.Option("--merchant", help="Only this merchant's (id).")]
Digits = Annotated[
    str | None, typer.Option("--last-digits", help="The number ends with these (4 to 15).")
]
Status = Annotated[str | None, typer.Option(help="Only this status.")]
Mode = Annotated[str | None, typer.Option(help="test or live; both if omitted.")]
Start = Annotated[
    str | None, typer.Option("--from", help="Created from: an ISO 8601 date or timestamp.")
]
End = Annotated[
    str | None, typer.Option("--to", help="Created until: an ISO 8601 date or timestamp.")
]
PageNumber = Annotated[int, typer.Option(min=1, max=MAX_PAGE)]
PerPage = Annotated[int, typer.Option(min=1, max=100)]


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    """What the tables show besides the object's own keys."""
    flat = row | {"mode": "live" if row["livemode"] else "test"}
    if "payment_mode" in row:
        flat |= {
            "operator": row["payment_mode"]["operator"],
            "phone_number": row["customer"]["phone_number"],
        }
    return flat


def _echo(found: dict[str, Any], columns: Sequence[str], as_json: bool) -> None:
    if as_json:
        echo_json(found)
        return
    rows, meta = found["data"], found["meta"]
    if not rows:
        typer.echo("nothing found")
        return
    echo_table([_flat(row) for row in rows], columns)
    typer.echo(f"page {meta['current_page']} of {meta['last_page']}, {meta['total']} in all")


def _command(
    name: str,
    summary: str,
    find: Callable[[AsyncSession, SearchFilter, Page], Awaitable[tuple[Sequence[Row], int]]],
    shown: Callable[[Row], dict[str, Any]],
    columns: Sequence[str],
    external_id_help: str = "The merchant's external_id.",
) -> None:
    """Adds `cauri search <name>`: every kind has the same filters."""

    @search_cli.command(name, help=summary)
    def command(
        reference: Reference = None,
        external_id: Annotated[str | None, typer.Option(help=external_id_help)] = None,
        merchant: MerchantId = None,
        last_digits: Digits = None,
        status: Status = None,
        mode: Mode = None,
        start: Start = None,
        end: End = None,
        page: PageNumber = 1,
        per_page: PerPage = 25,
        as_json: JsonFlag = False,
    ) -> None:

        livemode = None if mode is None else livemode_of(mode)
        asked = Page(page, per_page)

        async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
            wanted = SearchFilter(
                reference=reference,
                external_id=external_id,
                merchant_id=merchant,
                phone_digits=last_digits,
                status=status,
                livemode=livemode,
                # Parsed here: a bad date is the same error envelope as the API's.
                period=Period.parse(start, end),
            )
            rows, total = await find(session, wanted, asked)
            found = listing([shown(row) for row in rows], asked, total)
            return {"data": found["data"], "meta": found["meta"]}

        _echo(in_transaction(work), columns, as_json)


def _owned(
    shown: dict[str, Any], row: Payment | InstallmentPlan | Payout | Refund
) -> dict[str, Any]:
    return shown | {"merchant_id": row.merchant_id}


_command(
    "payments",
    "Payments (plans' instalments included), newest first.",
    search.payments,
    lambda payment: _owned(payment_object(payment), payment),
    (
        "created_at",
        "reference",
        "identifier",
        "merchant_id",
        "mode",
        "status",
        "amount",
        "currency",
        "operator",
        "phone_number",
        "external_id",
    ),
)
_command(
    "plans",
    "Installment plans (a plan's number: its instalments' and its refunds'), newest first.",
    search.plans,
    lambda plan: _owned(plan_object(plan), plan),
    (
        "created_at",
        "reference",
        "merchant_id",
        "mode",
        "status",
        "target_amount",
        "paid_amount",
        "currency",
        "external_id",
    ),
)
_command(
    "payouts",
    "Payouts, newest first (numbers masked, as the API shows them).",
    search.payouts,
    lambda payout: _owned(payout_object(payout), payout) | {"approval": payout.approval},
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
        "external_id",
    ),
)
_command(
    "refunds",
    "Refunds, newest first.",
    search.refunds,
    lambda refund: _owned(refund_object(refund), refund),
    ("created_at", "reference", "payment", "merchant_id", "mode", "status", "amount", "currency"),
    external_id_help="Its payment's external_id.",
)
