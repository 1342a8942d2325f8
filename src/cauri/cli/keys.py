"""`cauri keys`: a merchant's API keys, made, listed (by their hint only), revoked and
rotated with a grace period."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction, livemode_of, parse_duration, parse_instant
from cauri.cli.output import JsonFlag, echo_record, echo_table
from cauri.merchants.keys import LIVE_PREFIX, TEST_PREFIX
from cauri.merchants.service import merchants as merchant_service
from cauri.staff import actions

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.models import ApiKey
    from cauri.runtime import Runtime

keys_cli = typer.Typer(no_args_is_help=True, help="API keys.")


@keys_cli.command("create")
def keys_create(
    merchant_id: str,
    mode: Annotated[str, typer.Option(help="test or live")],
    expires_at: Annotated[str | None, typer.Option(help="ISO 8601; UTC if no offset.")] = None,
    as_json: JsonFlag = False,
) -> None:
    livemode = livemode_of(mode)
    expiry = parse_instant(expires_at, "--expires-at") if expires_at else None

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        key = await actions.create_key(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode, expires_at=expiry
        )
        return {"key": key}

    echo_record(in_transaction(work), as_json)


def key_row(key: ApiKey) -> dict[str, Any]:
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
        return [key_row(key) for key in await merchant_service.list_keys(session, merchant_id)]

    rows = in_transaction(work)
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False))
        return
    echo_table(rows, ("id", "mode", "hint", "created_at", "expires_at", "revoked_at"))


@keys_cli.command("revoke")
def keys_revoke(key_id: str, as_json: JsonFlag = False) -> None:
    """Refuses the key (401 unauthorized) from now on, on running servers too."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        return key_row(await actions.revoke_key(session, runtime, Actor.cli(), key_id))

    echo_record(in_transaction(work), as_json)


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
    livemode = livemode_of(mode)
    grace_period = parse_duration(grace, "--grace")

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        key = await actions.rotate_keys(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode, grace=grace_period
        )
        made = await merchant_service.key_of(session, key)
        others = [
            {"id": row["id"], "hint": row["hint"], "expires_at": row["expires_at"]}
            for row in map(key_row, await merchant_service.list_keys(session, merchant_id))
            if row["id"] != made.id and row["mode"] == mode and row["revoked_at"] is None
        ]
        # The key is shown this once; its id and hint name it afterwards, and the others'
        # expiry says how long the old ones keep working.
        return {"key": key, "id": made.id, "hint": key_row(made)["hint"], "others": others}

    echo_record(in_transaction(work), as_json)
