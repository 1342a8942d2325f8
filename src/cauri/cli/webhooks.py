"""`cauri webhooks resend`: a merchant's webhook delivery sent again, by the staff;
`set-endpoint` and `rotate-secret`: a merchant's endpoint and signing secret."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction, livemode_of
from cauri.cli.output import JsonFlag, echo_json
from cauri.staff import actions
from cauri.webhooks import service as webhooks
from cauri.webhooks.schemas import delivery_entry

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


webhooks_cli = typer.Typer(no_args_is_help=True, help="Merchants' webhook deliveries.")


@webhooks_cli.command("resend")
def webhooks_resend(delivery_id: str, as_json: JsonFlag = False) -> None:
    """Sends a delivery (of any merchant) again now, as the merchant's own retry does: a
    failed one gets a new series of attempts, a pending one its next attempt at once."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        delivery = await actions.resend_webhook_delivery(session, runtime, Actor.cli(), delivery_id)
        return delivery_entry(await webhooks.logged(session, delivery))

    entry = in_transaction(work)
    if as_json:
        echo_json(entry)
    else:
        typer.echo(
            f"delivery {entry['id']} ({entry['event']}): {entry['status']}, to {entry['url']}"
        )


_MODE = Annotated[str, typer.Option(help="test or live")]


@webhooks_cli.command("set-endpoint")
def webhooks_set_endpoint(
    merchant_id: str,
    mode: _MODE,
    url: Annotated[str | None, typer.Option(help="The merchant's HTTPS address.")] = None,
    disable: Annotated[bool, typer.Option("--disable", help="No more notifications.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """A merchant's endpoint of one mode, as its own `PUT /webhooks/endpoint` sets it."""

    livemode = livemode_of(mode)
    if (url is None) != disable:
        raise typer.BadParameter("give either --url or --disable", param_hint="--url")

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        endpoint = await actions.set_webhook_endpoint(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode, url=url
        )
        return {"merchant_id": merchant_id, "mode": mode, "url": endpoint.url}

    shown = in_transaction(work)
    if as_json:
        echo_json(shown)
    else:
        typer.echo(f"{merchant_id} ({mode}): {shown['url'] or 'no endpoint'}")


@webhooks_cli.command("rotate-secret")
def webhooks_rotate_secret(merchant_id: str, mode: _MODE, as_json: JsonFlag = False) -> None:
    """A new signing secret for the merchant's endpoint of that mode, printed this once
    (pending retries are signed with it)."""

    livemode = livemode_of(mode)

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        secret = await actions.rotate_webhook_secret(
            session, runtime, Actor.cli(), merchant_id, livemode=livemode
        )
        return {"merchant_id": merchant_id, "mode": mode, "secret": secret}

    shown = in_transaction(work)
    if as_json:
        echo_json(shown)
    else:
        typer.echo(shown["secret"])
