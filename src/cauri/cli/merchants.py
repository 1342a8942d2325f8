"""`cauri merchants list` and `cauri merchants show`: what the staff see of the accounts
(keys by their hint only: a key is shown once, when it is made)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.balance.schemas import balance_object
from cauri.cli.output import JsonFlag, echo_json, echo_table, in_transaction
from cauri.kit.money import to_major
from cauri.models import FeeRule, Merchant
from cauri.runtime import Runtime
from cauri.staff import reads


def fee_rule_row(rule: FeeRule) -> dict[str, Any]:
    """An account's own rule for a mode (`set-fee`'s answer): fixed parts in major units."""
    return {
        "merchant_id": rule.merchant_id,
        "operator": rule.mode,
        "percent": float(rule.percent),
        "fixed": rule.fixed,
        "fixed_eur": to_major(rule.fixed_eur, "EUR"),
        "fixed_usd": to_major(rule.fixed_usd, "USD"),
        "disabled": rule.disabled,
    }


def _merchant_row(merchant: Merchant) -> dict[str, Any]:
    return {
        "id": merchant.id,
        "name": merchant.name,
        "status": merchant.status,
        "fee_bearer": merchant.fee_bearer,
        "created_at": merchant.created_at.isoformat(),
    }


def merchants_list(
    status: Annotated[
        str | None, typer.Option(help="Only these: active, kyc_pending or suspended.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Every merchant account, newest first."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [_merchant_row(merchant) for merchant in await reads.merchants(session, status)]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no merchant (cauri merchants create --name NAME)")
    else:
        echo_table(rows, ("id", "name", "status", "fee_bearer", "created_at"))


def merchants_show(merchant_id: str, as_json: JsonFlag = False) -> None:
    """One account: payout account, limits, fees, keys (hints only) and balances per
    currency in each environment."""
    from cauri.cli import _key_row

    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        seen = await reads.merchant_overview(session, merchant_id)
        merchant = seen.merchant
        return _merchant_row(merchant) | {
            "payout_account": None
            if merchant.payout_phone is None
            else {
                "phone_number": merchant.payout_phone,
                "operator": merchant.payout_operator,
                "validated": merchant.payout_validated,
            },
            # Third-party payouts of the live environment, in XOF (`set-limits`).
            "limits": {
                "per_payout": merchant.limit_per_payout,
                "daily": merchant.limit_daily,
                "approval_threshold": merchant.approval_threshold,
            },
            "fee_rules": [fee_rule_row(rule) for rule in seen.fee_rules],
            "keys": [_key_row(key) for key in seen.keys],
            "balances": [balance_object(row.balance, row.livemode) for row in seen.balances],
        }

    shown = in_transaction(work)
    if as_json:
        echo_json(shown)
    else:
        _echo_merchant(shown)


def _echo_merchant(shown: dict[str, Any]) -> None:
    for key in ("id", "name", "status", "fee_bearer", "created_at"):
        typer.echo(f"{key}: {shown[key]}")
    account = shown["payout_account"]
    if account is None:
        typer.echo("payout account: none (cauri merchants set-payout-account)")
    else:
        validated = "validated" if account["validated"] else "NOT validated"
        typer.echo(
            f"payout account: {account['phone_number']} ({account['operator']}), {validated}"
        )
    limits = shown["limits"]
    per_payout, daily, threshold = (
        "-" if limits[key] is None else limits[key]
        for key in ("per_payout", "daily", "approval_threshold")
    )
    typer.echo(
        "live third-party payout limits (XOF): "
        f"per payout {per_payout}, daily {daily}, approval above {threshold}"
    )
    typer.echo("fee rules:" if shown["fee_rules"] else "fee rules: none (the platform's defaults)")
    for rule in shown["fee_rules"]:
        state = "  DISABLED" if rule["disabled"] else ""
        typer.echo(
            f"  {rule['operator']}: {rule['percent']}% + {rule['fixed']} XOF "
            f"({rule['fixed_eur']} EUR, {rule['fixed_usd']} USD){state}"
        )
    typer.echo("keys:")
    echo_table(
        shown["keys"], ("id", "mode", "hint", "created_at", "expires_at", "revoked_at"), "  "
    )
    typer.echo("balances:")
    echo_table(
        [row | {"mode": "live" if row["livemode"] else "test"} for row in shown["balances"]],
        ("mode", "currency", "available", "escrowed", "pending_payouts"),
        "  ",
    )
