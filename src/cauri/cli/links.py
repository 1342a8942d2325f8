"""One-time sign-in links as the CLI prints them: a staff account's to the console, a
merchant's member's to the dashboard."""

from __future__ import annotations

from typing import Any

import typer

from cauri.cli.output import echo_json
from cauri.config import get_settings
from cauri.kit.public_url import public_base_url
from cauri.people import accounts
from cauri.people.accounts import IssuedLink

# Where `cauri serve` listens by default: the links' base when CAURI_PUBLIC_URL is unset.
DEFAULT_SERVER = ("127.0.0.1", 8000)


def link_row(issued: IssuedLink, welcome_path: str) -> dict[str, Any]:
    """The account and its one-time link to `welcome_path` (the console's, or the
    dashboard's for a merchant's member)."""
    base = public_base_url(get_settings(), DEFAULT_SERVER)
    return accounts.account_row(issued.account) | {
        "link": f"{base}{welcome_path}{issued.token}",
        "link_expires_at": issued.expires_at.isoformat(),
    }


def echo_link(row: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo_json(row)
        return
    typer.echo(f"{row['email']} ({row['role']})")
    typer.echo(f"one-time sign-in link, valid until {row['link_expires_at']}:")
    typer.echo(row["link"])
