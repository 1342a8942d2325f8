"""What every command group of the CLI shares: its settings checked, its database resolved,
its work run in one transaction with errors printed as the API's envelope, and the parsing of
the options several groups take. The database libraries are imported when a command runs, not
when the CLI starts (`cauri --help` needs none of them)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

import typer

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime

T = TypeVar("T")

FIXED_CURRENCY_HELP = "The currency of the fixed amounts given: XOF (also XAF's), EUR or USD."


def check_settings() -> None:
    """Every CAURI_* setting valid, or each problem named and exit 2, before any command.
    Without CAURI_SECRET_KEY, the development key `cauri serve` made in the data directory,
    if any (kit/development_key.py)."""
    from pydantic import ValidationError

    from cauri.config import get_settings
    from cauri.kit import development_key

    try:
        settings = get_settings()
    except ValidationError as error:
        for problem in error.errors():
            name = "CAURI_" + "_".join(str(part) for part in problem["loc"]).upper()
            typer.echo(f"{name}: {problem['msg']}", err=True)
        raise typer.Exit(2) from None
    if settings.secret_key is None:
        try:
            kept = development_key.read(settings.data_dir)
        except development_key.UnsafeKeyFile as unsafe:
            typer.echo(f"CAURI_SECRET_KEY: {unsafe}", err=True)
            raise typer.Exit(2) from None
        if kept is not None:
            use_setting("CAURI_SECRET_KEY", kept)
            _ADOPTED.append(kept)


# The development key this process took from the data directory, if it did (not a key the
# deployment gave: `serve` off loopback refuses to start with it).
_ADOPTED: list[str] = []


def adopted_development_key() -> bool:
    return bool(_ADOPTED) and os.environ.get("CAURI_SECRET_KEY") == _ADOPTED[-1]


def use_setting(name: str, value: str) -> None:
    """`value` for the setting `name` in this process and those it starts (uvicorn's server
    processes read their settings from the environment)."""
    from cauri.config import get_settings

    os.environ[name] = value
    get_settings.cache_clear()


def resolved_url() -> str:
    """The database every command uses; starts (or attaches to) the embedded one if needed."""
    from cauri.config import get_settings
    from cauri.kit.db import database_url
    from cauri.kit.embedded_pg import EmbeddedPostgresError

    try:
        url = database_url(get_settings())
    except EmbeddedPostgresError as exc:
        typer.echo(f"The embedded PostgreSQL cannot start: {exc}", err=True)
        raise typer.Exit(1) from None
    # Server processes spawned by uvicorn read the same database, not a second embedded one.
    use_setting("CAURI_DATABASE_URL", url)
    return url


def with_runtime(work: Callable[[Runtime], Awaitable[T]], *, wired: bool = True) -> T:
    """`work` with the configured database and operators, opening its own transactions; a
    refusal (CauriError) is printed on stderr as the API's error envelope, exit 1.
    `wired=False` only for a command that writes nothing (`in_transaction(read_only=True)`)."""
    import asyncio

    from cauri.config import get_settings
    from cauri.kit.errors import CauriError
    from cauri.runtime import Runtime

    if wired:
        from cauri import wiring

        wiring.wire()  # a command may send money, or settle what an operator answered

    async def run() -> T:
        runtime = Runtime.build(get_settings(), url=resolved_url())
        try:
            return await work(runtime)
        finally:
            await runtime.close()

    try:
        return asyncio.run(run())
    except CauriError as error:
        typer.echo(json.dumps(error.envelope(), ensure_ascii=False), err=True)
        raise typer.Exit(1) from error


def in_transaction(
    work: Callable[[AsyncSession, Runtime], Awaitable[T]], *, read_only: bool = False
) -> T:
    """`work` in one transaction of the configured database (with_runtime). `read_only`: for
    a command that only shows, with no domain wired (it loads only what it shows: every
    domain's handlers cost a third of a second to import), and PostgreSQL refuses a write
    should one slip in, rather than half-doing it unwired."""
    from sqlalchemy import text

    from cauri.kit.db import unit_of_work

    async def transaction(runtime: Runtime) -> T:
        async with unit_of_work(runtime.sessionmaker) as session:
            if read_only:
                await session.execute(text("SET TRANSACTION READ ONLY"))
            return await work(session, runtime)

    return with_runtime(transaction, wired=not read_only)


def parse_instant(value: str, param_hint: str) -> datetime:
    """An ISO 8601 date or timestamp; UTC if it has no offset."""
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter("an ISO 8601 date or timestamp", param_hint=param_hint) from None
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


def livemode_of(mode: str) -> bool:
    """`--mode test|live`."""
    if mode not in ("test", "live"):
        raise typer.BadParameter("test or live", param_hint="--mode")
    return mode == "live"
