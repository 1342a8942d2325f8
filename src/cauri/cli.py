"""`cauri`: the operator's command line (DESIGN: operator-facing contract)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, TypeVar

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.config import get_settings
from cauri.kit import migrate as migrations
from cauri.kit.db import database_url, unit_of_work
from cauri.kit.errors import CauriError
from cauri.kit.logging import configure as configure_logging
from cauri.merchants.service import merchants as merchant_service
from cauri.platform.service import update_settings
from cauri.runtime import Runtime

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

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _resolved_url() -> str:
    """The database every command uses; starts (or attaches to) the embedded one if needed."""
    url = database_url(get_settings())
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


@app.command()
def migrate() -> None:
    """Brings the database schema up to date (alembic upgrade head)."""
    migrations.upgrade(_resolved_url())
    typer.echo("database is up to date")


@app.command()
def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: Annotated[int, typer.Option(help="Server processes.")] = 1,
    worker: Annotated[bool, typer.Option(help="Run background jobs in-process.")] = True,
) -> None:
    """Runs the API (and, unless --no-worker, the background worker)."""
    import uvicorn

    migrations.upgrade(_resolved_url())
    os.environ["CAURI_RUN_WORKER"] = "1" if worker else "0"
    uvicorn.run(
        "cauri.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=False,
        access_log=False,
    )


@app.command("worker")
def run_worker() -> None:
    """Runs background jobs only: deliveries, delayed outcomes, expiries, refunds."""
    from cauri.worker.handlers import all_handlers
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
            await Worker(runtime, all_handlers()).run_forever(stop)
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
        new = await merchant_service.create(
            session, name=name, status=status, now=runtime.clock.now()
        )
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
    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        merchant = await merchant_service.set_status(session, merchant_id, status)
        return {"id": merchant.id, "status": merchant.status}

    _print(_in_transaction(work), as_json)


@merchants_cli.command("set-fee")
def merchants_set_fee(
    merchant_id: str,
    operator: Annotated[str, typer.Option(help="An operator code, or `payout`.")],
    percent: Annotated[Decimal | None, typer.Option()] = None,
    fixed: Annotated[int | None, typer.Option()] = None,
    disabled: Annotated[bool, typer.Option("--disabled")] = False,
    as_json: JsonFlag = False,
) -> None:
    async def work(session: AsyncSession, _: Runtime) -> dict[str, Any]:
        rule = await merchant_service.set_fee(
            session, merchant_id, mode=operator, percent=percent, fixed=fixed, disabled=disabled
        )
        return {
            "merchant_id": rule.merchant_id,
            "operator": rule.mode,
            "percent": None if rule.percent is None else float(rule.percent),
            "fixed": rule.fixed,
            "disabled": rule.disabled,
        }

    _print(_in_transaction(work), as_json)


@keys_cli.command("create")
def keys_create(
    merchant_id: str,
    mode: Annotated[str, typer.Option(help="test or live")],
    expires_at: Annotated[str | None, typer.Option(help="ISO 8601; UTC if no offset.")] = None,
    as_json: JsonFlag = False,
) -> None:
    if mode not in ("test", "live"):
        raise typer.BadParameter("test or live", param_hint="--mode")
    expiry = _parse_instant(expires_at) if expires_at else None

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        key = await merchant_service.create_key(
            session,
            merchant_id,
            livemode=mode == "live",
            now=runtime.clock.now(),
            expires_at=expiry,
        )
        return {"key": key}

    _print(_in_transaction(work), as_json)


@settings_cli.command("set")
def settings_set(
    plan_creation_fee_fixed: Annotated[int | None, typer.Option()] = None,
    plan_creation_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    plan_penalty_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    fee_fixed: Annotated[int | None, typer.Option()] = None,
    payout_fee_percent: Annotated[Decimal | None, typer.Option()] = None,
    payout_fee_fixed: Annotated[int | None, typer.Option()] = None,
    as_json: JsonFlag = False,
) -> None:
    given = {
        key: value
        for key, value in {
            "plan_creation_fee_fixed": plan_creation_fee_fixed,
            "plan_creation_fee_percent": plan_creation_fee_percent,
            "plan_penalty_percent": plan_penalty_percent,
            "fee_percent": fee_percent,
            "fee_fixed": fee_fixed,
            "payout_fee_percent": payout_fee_percent,
            "payout_fee_fixed": payout_fee_fixed,
        }.items()
        if value is not None
    }

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        row = await update_settings(session, given, runtime.clock.now())
        return {
            column: (float(v) if isinstance(v, Decimal) else v)
            for column in (
                "plan_creation_fee_fixed",
                "plan_creation_fee_percent",
                "plan_penalty_percent",
                "fee_percent",
                "fee_fixed",
                "payout_fee_percent",
                "payout_fee_fixed",
            )
            for v in [getattr(row, column)]
        }

    _print(_in_transaction(work), as_json)
