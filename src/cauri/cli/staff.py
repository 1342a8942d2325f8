"""`cauri staff create|list|disable|link`: the accounts of the staff console. A new account
gets a one-time link to set its password (and enroll TOTP if its role needs it), printed
here for the administrator to hand over; or, with --password-stdin, a password at once."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit import Actor
from cauri.cli.common import in_transaction
from cauri.cli.links import echo_link, link_row
from cauri.cli.output import JsonFlag, echo_json, echo_table
from cauri.kit.errors import CauriError
from cauri.people import accounts, passwords, totp
from cauri.people.realm import STAFF
from cauri.signin.doors import CONSOLE
from cauri.staff import actions

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


staff_cli = typer.Typer(no_args_is_help=True, help="Staff accounts of the web console.")

_COLUMNS = ("email", "role", "password_set", "totp_enabled", "last_sign_in_at", "disabled_at")


def _password_from_stdin() -> str:
    password = sys.stdin.read().removesuffix("\n").removesuffix("\r")
    try:
        passwords.check_new(password)
    except CauriError as error:
        typer.echo(error.message, err=True)
        raise typer.Exit(2) from None
    return password


@staff_cli.command("create")
def staff_create(
    email: str,
    role: Annotated[str, typer.Option(help="admin, finance, support or viewer")],
    password_stdin: Annotated[
        bool,
        typer.Option(
            "--password-stdin", help="Read a password from standard input instead of a link."
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """A staff account; prints a one-time link (24 h) to /console/welcome/… where the person
    sets their password (and enrolls TOTP: admin and finance must). Links are built on
    CAURI_PUBLIC_URL (else http://127.0.0.1:8000)."""
    password = _password_from_stdin() if password_stdin else None

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        # The console cannot sign anyone in without it: refuse now, not at the first sign-in.
        totp.required_key(runtime.settings.secret_key)
        account = await actions.create_staff(
            session, runtime, Actor.cli(), email=email, role=role, password=password
        )
        if password is not None:
            return accounts.account_row(account)
        return link_row(
            await accounts.issue_link(session, account, runtime.clock.now()), CONSOLE.welcome_path
        )

    row = in_transaction(work)
    if password is None:
        echo_link(row, as_json)
    elif as_json:
        echo_json(row)
    else:
        typer.echo(f"{row['email']} ({row['role']}): password set")


@staff_cli.command("list")
def staff_list(as_json: JsonFlag = False) -> None:
    """Every staff account, oldest first (never a password hash nor a TOTP secret)."""

    async def work(session: AsyncSession, _: Runtime) -> list[dict[str, Any]]:
        return [
            accounts.account_row(account)
            for account in await accounts.list_accounts(session, STAFF)
        ]

    rows = in_transaction(work)
    if as_json:
        echo_json(rows)
    elif not rows:
        typer.echo("no staff account (cauri staff create EMAIL --role ROLE)")
    else:
        echo_table(rows, _COLUMNS)


@staff_cli.command("disable")
def staff_disable(email: str, as_json: JsonFlag = False) -> None:
    """Refuses the account's sign-in from now on and ends its sessions at once."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        return accounts.account_row(
            await actions.disable_staff(session, runtime, Actor.cli(), email)
        )

    row = in_transaction(work)
    if as_json:
        echo_json(row)
    else:
        typer.echo(f"{row['email']} disabled at {row['disabled_at']}; its sessions are ended")


@staff_cli.command("link")
def staff_link(email: str, as_json: JsonFlag = False) -> None:
    """A new one-time sign-in link (24 h), after a lost password or device: earlier links
    stop working, the account's sessions end and its TOTP enrollment starts over."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        totp.required_key(runtime.settings.secret_key)
        return link_row(
            await actions.link_staff(session, runtime, Actor.cli(), email), CONSOLE.welcome_path
        )

    echo_link(in_transaction(work), as_json)
