"""`cauri db`: the embedded PostgreSQL, and where the database is, as `serve` says at start."""

from __future__ import annotations

import typer

from cauri.config import Settings, get_settings
from cauri.kit import embedded_pg
from cauri.kit.embedded_pg import EmbeddedPostgresError

db_cli = typer.Typer(no_args_is_help=True, help="The embedded PostgreSQL (no CAURI_DATABASE_URL).")


def where(settings: Settings) -> str:
    """Where the data lives, for people: the embedded server's directory, or the configured
    URL with its password hidden."""
    if settings.database_url is None:
        return f"embedded PostgreSQL in {settings.data_dir.resolve()} (stop it: cauri db stop)"
    from cauri.kit.db import engine_url

    # Its own scheme; several hosts shown as the engine reads them (?host=h1:5432&host=…).
    scheme = settings.database_url.partition("://")[0]
    shown = engine_url(settings.database_url).set(drivername=scheme)
    return shown.render_as_string(hide_password=True)


@db_cli.command("stop")
def stop() -> None:
    """Stops the embedded PostgreSQL under CAURI_DATA_DIR; the data stays. Stop the servers
    and workers first: their sessions are ended. The next command that needs the database
    (serve, worker, any other) starts it again."""
    settings = get_settings()
    if settings.database_url is not None:
        typer.echo(
            "CAURI_DATABASE_URL is set: that database is not Cauri's to stop "
            "(only the embedded one, used without it, is).",
            err=True,
        )
        raise typer.Exit(1)
    try:
        stopped = embedded_pg.stop(settings.data_dir)
    except EmbeddedPostgresError as exc:
        typer.echo(f"The embedded PostgreSQL cannot be stopped: {exc}", err=True)
        raise typer.Exit(1) from None
    data_dir = settings.data_dir.resolve()
    if stopped:
        typer.echo(f"stopped the embedded PostgreSQL of {data_dir}")
    else:
        typer.echo(f"no embedded PostgreSQL runs for {data_dir}")
