"""`cauri merchants`: the accounts as the staff see them (keys by their hint only: a key is
shown once, when it is made) and what the staff change of them: status, fees, payout account
and limits, balance credits."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.balance.schemas import balance_object
from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.common import FIXED_CURRENCY_HELP, in_transaction, livemode_of
from cauri.cli.keys import key_row
from cauri.cli.links import echo_link, link_row
from cauri.cli.output import JsonFlag, echo_json, echo_record, echo_table
from cauri.kit.money import to_major
from cauri.models import FeeRule, Merchant, MoneyApproval
from cauri.people import totp
from cauri.signin.doors import DASHBOARD
from cauri.staff import actions, reads

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


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
            "keys": [key_row(key) for key in seen.keys],
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


merchants_cli = typer.Typer(no_args_is_help=True, help="Merchant accounts.")
merchants_cli.command("list")(merchants_list)
merchants_cli.command("show")(merchants_show)


@merchants_cli.command("create")
def merchants_create(
    name: Annotated[str, typer.Option()],
    status: Annotated[str, typer.Option(help="active, kyc_pending or suspended")] = "active",
    as_json: JsonFlag = False,
) -> None:
    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        new = await actions.create_merchant(session, runtime, Actor.cli(), name=name, status=status)
        return {
            "id": new.merchant.id,
            "name": new.merchant.name,
            "status": new.merchant.status,
            "test_key": new.test_key,
            "live_key": new.live_key,
        }

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("invite")
def merchants_invite(
    merchant_id: str,
    email: Annotated[str, typer.Option(help="The member's email address.")],
    role: Annotated[str, typer.Option(help="owner, developer, finance or viewer")] = "owner",
    as_json: JsonFlag = False,
) -> None:
    """A member of the merchant's team (its first owner, by default); prints a one-time link
    (24 h) to /dashboard/welcome/… where they set their password (and enroll TOTP: owners
    and finance must). Links are built on CAURI_PUBLIC_URL (else http://127.0.0.1:8000)."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        # The dashboard cannot sign anyone in without it: refuse now, not at the first sign-in.
        totp.required_key(runtime.settings.secret_key)
        issued = await actions.invite_member(
            session, runtime, Actor.cli(), merchant_id, email=email, role=role
        )
        return link_row(issued, DASHBOARD.welcome_path) | {"merchant_id": merchant_id}

    echo_link(in_transaction(work), as_json)


@merchants_cli.command("link-member")
def merchants_link_member(
    merchant_id: str,
    email: Annotated[str, typer.Option(help="The member's email address.")],
    as_json: JsonFlag = False,
) -> None:
    """A new one-time link (24 h) for a member of the merchant's team who lost their password
    or device (an owner no other owner can reset): earlier links, sessions and the TOTP
    enrollment end."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        issued = await actions.link_member(session, runtime, Actor.cli(), merchant_id, email)
        return link_row(issued, DASHBOARD.welcome_path) | {"merchant_id": merchant_id}

    echo_link(in_transaction(work), as_json)


@merchants_cli.command("set-status")
def merchants_set_status(merchant_id: str, status: str, as_json: JsonFlag = False) -> None:
    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        merchant = await actions.set_merchant_status(
            session, runtime, Actor.cli(), merchant_id, status
        )
        return {"id": merchant.id, "status": merchant.status}

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("set-fee")
def merchants_set_fee(
    merchant_id: str,
    operator: Annotated[str, typer.Option(help="An operator code, or `payout`.")],
    percent: Annotated[Decimal | None, typer.Option(help="Omitted: 0.")] = None,
    fixed: Annotated[
        Decimal | None, typer.Option(help="In major units of --currency. Omitted: 0.")
    ] = None,
    currency: Annotated[str, typer.Option(help=FIXED_CURRENCY_HELP)] = "XOF",
    disabled: Annotated[bool, typer.Option("--disabled")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Sets the account's whole rule for a mode: what is omitted is 0, not the platform's
    default. The rule's fixed fees in other currencies are kept."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        rule = await actions.set_fee(
            session,
            runtime,
            Actor.cli(),
            merchant_id,
            mode=operator,
            percent=percent,
            fixed=fixed,
            disabled=disabled,
            currency=currency.upper(),
        )
        return fee_rule_row(rule)

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("set-fee-bearer")
def merchants_set_fee_bearer(
    merchant_id: str,
    bearer: Annotated[str, typer.Argument(help="customer or merchant")],
    as_json: JsonFlag = False,
) -> None:
    """Who pays a payment's commission: `customer` (debited amount + fee, the default) or
    `merchant` (debited amount, credited amount - fee). Plans' instalments are unaffected."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        merchant = await actions.set_fee_bearer(session, runtime, Actor.cli(), merchant_id, bearer)
        return {"id": merchant.id, "fee_bearer": merchant.fee_bearer}

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("set-payout-account")
def merchants_set_payout_account(
    merchant_id: str,
    phone_number: Annotated[str, typer.Option(help="Country code included, no +.")],
    operator: Annotated[str, typer.Option(help="A Mobile Money operator code.")],
    validated: Annotated[bool, typer.Option("--validated")] = False,
    as_json: JsonFlag = False,
) -> None:
    """The merchant's own account, where payouts without phone_number go once validated."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        merchant = await actions.set_payout_account(
            session,
            runtime,
            Actor.cli(),
            merchant_id,
            phone_number=phone_number,
            operator=operator,
            validated=validated,
        )
        return {
            "id": merchant.id,
            "payout_phone_number": merchant.payout_phone,
            "payout_operator": merchant.payout_operator,
            "payout_validated": merchant.payout_validated,
        }

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("set-limits")
def merchants_set_limits(
    merchant_id: str,
    per_payout: Annotated[int | None, typer.Option(min=0, help="Cap of one payout.")] = None,
    daily: Annotated[int | None, typer.Option(min=0, help="Cap over 24 hours.")] = None,
    approval_threshold: Annotated[
        int | None, typer.Option(min=0, help="Above it, a payout waits for approval.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Third-party payout limits of a live account, in XOF; unset options are kept."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        merchant = await actions.set_limits(
            session,
            runtime,
            Actor.cli(),
            merchant_id,
            per_payout=per_payout,
            daily=daily,
            approval_threshold=approval_threshold,
        )
        return {
            "id": merchant.id,
            "per_payout": merchant.limit_per_payout,
            "daily": merchant.limit_daily,
            "approval_threshold": merchant.approval_threshold,
        }

    echo_record(in_transaction(work), as_json)


@merchants_cli.command("credit")
def merchants_credit(
    merchant_id: str,
    mode: Annotated[str, typer.Option(help="test or live")],
    amount: Annotated[Decimal, typer.Option(help="In the currency's unit.")],
    reason: Annotated[str, typer.Option(help="What the top-up is, e.g. the bank transfer.")],
    currency: Annotated[str, typer.Option()] = "XOF",
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Credits the available balance: a bank transfer received from the merchant. A live
    credit above the platform's payout-dual-approval-above is only asked (--as and --totp
    required) and done on a second person's approval (`cauri approvals approve`)."""
    livemode = livemode_of(mode)

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        available = await actions.credit_balance(
            session,
            runtime,
            await acting(session, runtime, as_email, totp_code),
            merchant_id,
            livemode=livemode,
            amount=amount,
            currency=currency.upper(),
            reason=reason,
        )
        if isinstance(available, MoneyApproval):
            return held(available)
        return {
            "merchant_id": merchant_id,
            "livemode": livemode,
            "currency": currency.upper(),
            "available": to_major(available, currency.upper()),
        }

    echo_record(in_transaction(work), as_json)
