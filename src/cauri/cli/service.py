"""`cauri migrate`, `cauri serve` and `cauri worker`: the service's own processes."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import TYPE_CHECKING, Annotated

import structlog
import typer
from sqlalchemy.exc import DBAPIError

from cauri.audit.actor import Actor
from cauri.cli import database
from cauri.cli.common import adopted_development_key, in_transaction, resolved_url, use_setting
from cauri.config import Settings, get_settings
from cauri.history import partitions
from cauri.kit import collector, development_key
from cauri.kit import migrate as migrations
from cauri.kit.logging import configure as configure_logging
from cauri.kit.public_url import is_loopback
from cauri.runtime import Runtime
from cauri.staff import keyring

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession


def migrate() -> None:
    """Brings the database schema up to date (alembic upgrade head)."""
    migrations.upgrade(resolved_url())
    _create_months_ahead()
    _seal_webhook_secrets_in_clear()
    typer.echo("database is up to date")


def _create_months_ahead() -> None:
    """The history tables' partitions of this month and the next ones (the worker's daily
    run keeps them ahead afterwards)."""

    async def work(session: AsyncSession, runtime: Runtime) -> partitions.Ahead:
        return await partitions.ensure_ahead(session, runtime.clock.now())

    try:
        ahead = in_transaction(work)
    except DBAPIError as error:
        # Another process holds the tables' lock (its own start, the daily run): the
        # worker's daily run makes them, and nothing waits for them meanwhile.
        typer.echo(f"monthly partitions not created now ({error.orig}); the worker will", err=True)
        return
    if ahead.created:
        typer.echo(f"{len(ahead.created)} monthly partition(s) created")
    for table, month in ahead.held_in_default:
        typer.echo(f"{table}: rows of {month} are in its default partition (docs/SCALING.md)")


def _seal_webhook_secrets_in_clear() -> None:
    """After the migrations: webhook secrets written in clear before migration 0025 are
    sealed, once CAURI_SECRET_KEY is set (until then deliveries read them as they are)."""
    if get_settings().secret_key is None:
        return

    async def work(session: AsyncSession, runtime: Runtime) -> int:
        return await keyring.seal_clear(session, runtime, Actor.cli())

    sealed = in_transaction(work)
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
        # A development key found in the data directory is no key for a server off loopback.
        unset = getattr(settings, setting) is None or (
            setting == "secret_key" and adopted_development_key()
        )
        if unset and not is_loopback(host):
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
    base = settings.public_url or f"http://{f'[{host}]' if ':' in host else host}:{port}"
    if is_loopback(host) and settings.public_url is None:
        _on_a_developers_machine(settings, base)
    migrations.upgrade(resolved_url())
    _create_months_ahead()
    _seal_webhook_secrets_in_clear()
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


def _on_a_developers_machine(settings: Settings, base: str) -> None:
    """Serving on loopback with no CAURI_PUBLIC_URL: a developer's machine (a production
    server on loopback sits behind a proxy, and its payment pages need the public URL). A key
    made once if none was given, webhooks to this machine's own receivers allowed unless
    CAURI_WEBHOOK_ALLOW_LOOPBACK says otherwise, and the address it serves on given to
    operators for their callbacks (as it is to customers for the payment pages), so that a
    contract fake or a sandbox on this machine can call back; each said at start."""
    log = structlog.get_logger("cauri.serve")
    use_setting("CAURI_PUBLIC_URL", base)
    log.info("serve.public_url_on_loopback", public_url=base)
    # The command line's start adopted a key made earlier (cli/common.check_settings): said
    # again, as at every start with it.
    if settings.secret_key is None or adopted_development_key():
        try:
            key, new = development_key.made(settings.data_dir)
        except development_key.UnsafeKeyFile as unsafe:
            typer.echo(f"CAURI_SECRET_KEY: {unsafe}", err=True)
            raise typer.Exit(2) from None
        use_setting("CAURI_SECRET_KEY", key)
        path = settings.data_dir / development_key.FILE_NAME
        log.warning("serve.development_key", path=str(path), made_now=new)
    if settings.webhook_allow_loopback is None:
        use_setting("CAURI_WEBHOOK_ALLOW_LOOPBACK", "true")
        log.info("serve.webhooks_to_loopback_allowed", setting="CAURI_WEBHOOK_ALLOW_LOOPBACK")


def run_worker() -> None:
    """Runs background jobs only: deliveries, delayed outcomes, expiries, refunds."""
    from cauri import jobs
    from cauri.worker.runner import Worker

    settings = get_settings()
    configure_logging(settings.log_json)
    url = resolved_url()

    async def run() -> None:
        runtime = Runtime.build(get_settings(), url=url)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        try:
            await jobs.started(runtime)
            worker = Worker(runtime, jobs.handlers())
            collector.spare_what_lives_on()
            await worker.run_forever(stop)
        finally:
            await runtime.close()

    asyncio.run(run())
