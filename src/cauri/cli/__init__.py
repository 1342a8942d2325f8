"""`cauri`: the operator's command line (DESIGN: operator-facing contract)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any, TypeVar

import structlog
import typer
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.cli import database
from cauri.cli.acting import AsOption, TotpOption, acting, held
from cauri.cli.approvals import approvals_cli
from cauri.cli.audit import audit_cli
from cauri.cli.connectors import connectors_cli, exchanges_cli, routes_cli
from cauri.cli.exports import export_cli
from cauri.cli.ledger import ledger_cli
from cauri.cli.merchants import fee_rule_row, merchants_list, merchants_show
from cauri.cli.output import JsonFlag, echo_table
from cauri.cli.payments import payments_cli
from cauri.cli.payouts import payout_row, payouts_list
from cauri.cli.plans import plans_cli
from cauri.cli.search import search_cli
from cauri.cli.secrets import secrets_cli
from cauri.cli.settings import platform_row, settings_show
from cauri.cli.staff import staff_cli
from cauri.cli.webhooks import webhooks_cli
from cauri.config import get_settings
from cauri.kit import collector
from cauri.kit import migrate as migrations
from cauri.kit.db import database_url, unit_of_work
from cauri.kit.embedded_pg import EmbeddedPostgresError
from cauri.kit.errors import CauriError
from cauri.kit.logging import configure as configure_logging
from cauri.kit.money import to_major
from cauri.kit.public_url import is_loopback
from cauri.merchants.keys import LIVE_PREFIX, TEST_PREFIX
from cauri.merchants.service import merchants as merchant_service
from cauri.models import ApiKey, MoneyApproval
from cauri.payouts.service import payouts as payout_service
from cauri.runtime import Runtime
from cauri.staff import actions, keyring

T = TypeVar("T")

app = typer.Typer(
    no_args_is_help=True, help="Cauri payment service.", pretty_exceptions_enable=False
)
merchants_cli = typer.Typer(no_args_is_help=True, help="Merchant accounts.")
keys_cli = typer.Typer(no_args_is_help=True, help="API keys.")
settings_cli = typer.Typer(no_args_is_help=True, help="Platform-wide settings.")
app.add_typer(merchants_cli, name="merchants")
app.add_typer(keys_cli, name="keys")
app.add_typer(settings_cli, name="settings")
app.add_typer(connectors_cli, name="connectors")
app.add_typer(routes_cli, name="routes")
app.add_typer(exchanges_cli, name="exchanges")
app.add_typer(database.db_cli, name="db")
app.add_typer(payments_cli, name="payments")
app.add_typer(plans_cli, name="plans")
app.add_typer(search_cli, name="search")
app.add_typer(ledger_cli, name="ledger")
app.add_typer(export_cli, name="export")
app.add_typer(staff_cli, name="staff")
app.add_typer(audit_cli, name="audit")
app.add_typer(webhooks_cli, name="webhooks")
app.add_typer(approvals_cli, name="approvals")
app.add_typer(secrets_cli, name="secrets")
merchants_cli.command("list")(merchants_list)
merchants_cli.command("show")(merchants_show)
settings_cli.command("show")(settings_show)


@app.callback()
def _settings_are_valid() -> None:
    """Cauri payment service."""
    try:
        get_settings()
    except ValidationError as error:
        for problem in error.errors():
            name = "CAURI_" + "_".join(str(part) for part in problem["loc"]).upper()
            typer.echo(f"{name}: {problem['msg']}", err=True)
        raise typer.Exit(2) from None


_FIXED_CURRENCY_HELP = "The currency of the fixed amounts given: XOF (also XAF's), EUR or USD."


def _resolved_url() -> str:
    """The database every command uses; starts (or attaches to) the embedded one if needed."""
    try:
        url = database_url(get_settings())
    except EmbeddedPostgresError as exc:
        typer.echo(f"The embedded PostgreSQL cannot start: {exc}", err=True)
        raise typer.Exit(1) from None
    # Server processes spawned by uvicorn read the same database, not a second embedded one.
    os.environ["CAURI_DATABASE_URL"] = url
    get_settings.cache_clear()
    return url


def _in_transaction(work: Callable[[AsyncSession, Runtime], Awaitable[T]]) -> T:
    async def run() -> T:
        runtime = Runtime.build(get_settings(), url=_resolved_url())
        try:
            async with unit_of_work(runtime.sessionmaker) as session:
                return await work(session, runtime)
        finally:
            await runtime.close()

    try:
        return asyncio.run(run())
    except CauriError as error:
        typer.echo(json.dumps(error.envelope(), ensure_ascii=False), err=True)
        raise typer.Exit(1) from error


def _print(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(data, ensure_ascii=False, default=str))
    else:
        for key, value in data.items():
            typer.echo(f"{key}: {value}")


def _parse_instant(value: str) -> datetime:
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            "an ISO 8601 date or timestamp", param_hint="--expires-at"
        ) from None
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


_DURATION = re.compile(r"([0-9]{1,9})([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: str, param_hint: str) -> timedelta:
    """`0`, `90s`, `30m`, `24h`, `7d` (a bare number is seconds)."""
    match = _DURATION.fullmatch(value.strip())
    if match is None:
        raise typer.BadParameter("a duration such as 0, 90s, 30m, 24h or 7d", param_hint=param_hint)
    amount, unit = match.groups()
    return timedelta(seconds=int(amount) * _UNIT_SECONDS[unit])


def _livemode(mode: str) -> bool:
    if mode not in ("test", "live"):
        raise typer.BadParameter("test or live", param_hint="--mode")
    return mode == "live"


@app.command()
def migrate() -> None:
    """Brings the database schema up to date (alembic upgrade head)."""
    migrations.upgrade(_resolved_url())
    _seal_webhook_secrets_in_clear()
    typer.echo("database is up to date")


def _seal_webhook_secrets_in_clear() -> None:
    """After the migrations: webhook secrets written in clear before migration 0025 are
    sealed, once CAURI_SECRET_KEY is set (until then deliveries read them as they are)."""
    if get_settings().secret_key is None:
        return

    async def work(session: AsyncSession, runtime: Runtime) -> int:
        return await keyring.seal_clear(session, runtime, Actor.cli())

    sealed = _in_transaction(work)
    if sealed:
        typer.echo(f"{sealed} webhook signing secret(s) written in clear are now encrypted")


# What `serve` refuses to start without off loopback, and why.
_OFF_LOOPBACK = (
    # Customers would be sent to a payment page whose address nobody configured.
    (
        "public_url",
        "CAURI_PUBLIC_URL",
        "the base of payment_url, e.g. https://pay.example.com; set it, or serve on 127.0.0.1 "
        "behind a proxy that sets it",
    ),
    (
        "secret_key",
        "CAURI_SECRET_KEY",
        "it encrypts webhook signing secrets, connector credentials and TOTP secrets; e.g. the "
        "output of `openssl rand -hex 32`, the same for every process",
    ),
)


@app.command()
def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: Annotated[int, typer.Option(help="Server processes.")] = 1,
    worker: Annotated[bool, typer.Option(help="Run background jobs in-process.")] = True,
) -> None:
    """Runs the API (and, unless --no-worker, the background worker)."""
    import uvicorn

    settings = get_settings()
    for setting, name, why in _OFF_LOOPBACK:
        if getattr(settings, setting) is None and not is_loopback(host):
            typer.echo(
                f"cauri serve --host {host}: {name} is required off loopback ({why}).", err=True
            )
            raise typer.Exit(2)
    if workers > 1 and settings.redis_url is None:
        typer.echo(
            f"warning: --workers {workers} without CAURI_REDIS_URL: each process counts the "
            f"rate limit apart, so a client gets up to {workers} times {settings.rate_limit}.",
            err=True,
        )
    configure_logging(settings.log_json)
    migrations.upgrade(_resolved_url())
    _seal_webhook_secrets_in_clear()
    base = settings.public_url or f"http://{f'[{host}]' if ':' in host else host}:{port}"
    structlog.get_logger("cauri.serve").info(
        "serve.starting", database=database.where(settings), docs=f"{base.rstrip('/')}/api/v1/docs"
    )
    os.environ["CAURI_RUN_WORKER"] = "1" if worker else "0"
    uvicorn.run(
        "cauri.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=False,
        access_log=False,
        # A spawned server process imports the whole CLI before it can answer the supervisor's
        # first health check; uvicorn's 5 s are not enough on a busy machine, and a process
        # killed for it is respawned to be killed again, so nothing ever serves.
        timeout_worker_healthcheck=60,
        # uvicorn's own logging config would print its lines around the redaction.
        log_config=None,
    )


@app.command("worker")
def run_worker() -> None:
    """Runs background jobs only: deliveries, delayed outcomes, expiries, refunds."""
    from cauri import jobs
    from cauri.worker.runner import Worker

    settings = get_settings()
    configure_logging(settings.log_json)
    url = _resolved_url()

    async def run() -> None:
        runtime = Runtime.build(get_settings(), url=url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            worker = Worker(runtime, jobs.handlers())
            collector.spare_what_lives_on()
            await worker.run_forever(stop)
        finally:
            await runtime.close()

    asyncio.run(run())


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

    _print(_in_transaction(work), as_json)


@merchants_cli.command("set-status")
def merchants_set_status(merchant_id: str, status: str, as_json: JsonFlag = False) -> None:
    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        merchant = await actions.set_merchant_status(
            session, runtime, Actor.cli(), merchant_id, status
        )
        return {"id": merchant.id, "status": merchant.status}

    _print(_in_transaction(work), as_json)


@merchants_cli.command("set-fee")
def merchants_set_fee(
    merchant_id: str,
    operator: Annotated[str, typer.Option(help="An operator code, or `payout`.")],
    percent: Annotated[Decimal | None, typer.Option(help="Omitted: 0.")] = None,
    fixed: Annotated[
        Decimal | None, typer.Option(help="In major units of --currency. Omitted: 0.")
    ] = None,
    currency: Annotated[str, typer.Option(help=_FIXED_CURRENCY_HELP)] = "XOF",
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

    _print(_in_transaction(work), as_json)


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

    _print(_in_transaction(work), as_json)


@keys_cli.command("create")
def keys_create(
    merchant_id: str,
    mode: Annotated[str, typer.Option(help="test or live")],
    expires_at: Annotated[str | None, typer.Option(help="ISO 8601; UTC if no offset.")] = None,
    as_json: JsonFlag = False,
) -> None:
    livemode = _livemode(mode)
    expiry = _parse_instant(expires_at) if expires_at else None

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        key = await actions.create_key(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode, expires_at=expiry
        )
        return {"key": key}

    _print(_in_transaction(work), as_json)


def _key_row(key: ApiKey) -> dict[str, Any]:
    """What an operator may see of a key: never the key, nor its digest."""
    return {
        "id": key.id,
        "mode": "live" if key.livemode else "test",
        "hint": (LIVE_PREFIX if key.livemode else TEST_PREFIX) + "…" + key.key_hint,
        "created_at": key.created_at.isoformat(),
        "expires_at": key.expires_at and key.expires_at.isoformat(),
        "revoked_at": key.revoked_at and key.revoked_at.isoformat(),
    }


@keys_cli.command("list")
def keys_list(merchant_id: str, as_json: JsonFlag = False) -> None:
    """The merchant's keys, oldest first (the keys themselves were shown once, at creation)."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [_key_row(key) for key in await merchant_service.list_keys(session, merchant_id)]

    rows = _in_transaction(work)
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False))
        return
    echo_table(rows, ("id", "mode", "hint", "created_at", "expires_at", "revoked_at"))


@keys_cli.command("revoke")
def keys_revoke(key_id: str, as_json: JsonFlag = False) -> None:
    """Refuses the key (401 unauthorized) from now on, on running servers too."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        return _key_row(await actions.revoke_key(session, runtime, Actor.cli(), key_id))

    _print(_in_transaction(work), as_json)


@keys_cli.command("rotate")
def keys_rotate(
    merchant_id: str,
    mode: Annotated[str, typer.Option(help="test or live")],
    grace: Annotated[
        str,
        typer.Option(
            help="How long the other keys of that mode keep working: 0, 90s, 30m, 24h, 7d."
        ),
    ] = "24h",
    as_json: JsonFlag = False,
) -> None:
    """A new key; the merchant's other keys of that mode expire after the grace period."""
    livemode = _livemode(mode)
    grace_period = parse_duration(grace, "--grace")

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        key = await actions.rotate_keys(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode, grace=grace_period
        )
        return {"key": key}

    _print(_in_transaction(work), as_json)


@settings_cli.command("set")
def settings_set(
    plan_creation_fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    plan_creation_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    plan_penalty_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    payout_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    payout_fee_fixed: Annotated[Decimal | None, typer.Option()] = None,
    payout_dual_approval_above: Annotated[
        Decimal | None,
        typer.Option(help="Held payouts above this amount need two people's approvals."),
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option(
            help="A setting to leave without a value (in --currency for an amount): "
            "payout-dual-approval-above (never two approvals), plan-creation-fee-fixed or "
            "-percent. Repeatable."
        ),
    ] = None,
    currency: Annotated[str, typer.Option(help=_FIXED_CURRENCY_HELP)] = "XOF",
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Changes the given settings; the others are kept. Raising or unsetting
    payout-dual-approval-above (where set) is only asked, on its own (--as and --totp
    required), and done on a second admin's approval (`cauri approvals approve`)."""
    given: dict[str, Decimal | None] = {
        key: value
        for key, value in {
            "plan_creation_fee_fixed": plan_creation_fee_fixed,
            "plan_creation_fee_percent": plan_creation_fee_percent,
            "plan_penalty_percent": plan_penalty_percent,
            "fee_percent": fee_percent,
            "fee_fixed": fee_fixed,
            "payout_fee_percent": payout_fee_percent,
            "payout_fee_fixed": payout_fee_fixed,
            "payout_dual_approval_above": payout_dual_approval_above,
        }.items()
        if value is not None
    }
    given |= {name.replace("-", "_"): None for name in unset or ()}

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        done = await actions.set_settings(session, runtime, actor, given, currency=currency.upper())
        return held(done) if isinstance(done, MoneyApproval) else platform_row(done)

    _print(_in_transaction(work), as_json)


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

    _print(_in_transaction(work), as_json)


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

    _print(_in_transaction(work), as_json)


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
    livemode = _livemode(mode)

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

    _print(_in_transaction(work), as_json)


payouts_cli = typer.Typer(no_args_is_help=True, help="Third-party payouts held for approval.")
app.add_typer(payouts_cli, name="payouts")
payouts_cli.command("list")(payouts_list)


_DECISION_REASON = Annotated[str | None, typer.Option(help="Why; kept in the audit log.")]


@payouts_cli.command("approve")
def payouts_approve(
    reference: str,
    reason: _DECISION_REASON = None,
    as_email: AsOption = None,
    totp_code: TotpOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Debits the balance and hands the payout to the worker to send. Above the platform's
    `payout-dual-approval-above`, only the second approval, by someone else, does; each of
    the two names its staff account (--as EMAIL --totp CODE)."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        actor = await acting(session, runtime, as_email, totp_code)
        payout = await actions.approve_payout(session, runtime, actor, reference, reason)
        return payout_row(payout, await payout_service.approvals(session, reference))

    _print(_in_transaction(work), as_json)


@payouts_cli.command("reject")
def payouts_reject(
    reference: str, reason: _DECISION_REASON = None, as_json: JsonFlag = False
) -> None:
    """Fails the payout; nothing was debited."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        payout = await actions.reject_payout(session, runtime, Actor.cli(), reference, reason)
        return payout_row(payout, await payout_service.approvals(session, reference))

    _print(_in_transaction(work), as_json)
