"""`cauri secrets rotate`: after CAURI_SECRET_KEY changed (the old key moved to
CAURI_PREVIOUS_SECRET_KEYS), every secret at rest encrypted again with the new key, in one
transaction, audited; then the old key can go. Run it again: it changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from cauri.audit.actor import Actor
from cauri.cli.common import in_transaction
from cauri.cli.output import JsonFlag, echo_json
from cauri.staff import keyring

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


secrets_cli = typer.Typer(no_args_is_help=True, help="Secrets at rest (CAURI_SECRET_KEY).")


@secrets_cli.command("rotate")
def secrets_rotate(as_json: JsonFlag = False) -> None:
    """Encrypts connector credentials, webhook signing secrets and staff TOTP secrets again
    with CAURI_SECRET_KEY (each read with it or CAURI_PREVIOUS_SECRET_KEYS); webhook secrets
    still in clear are sealed. Counts only, never a secret."""

    async def work(session: AsyncSession, runtime: Runtime) -> dict[str, Any]:
        return await keyring.rotate(session, runtime, Actor.cli())

    counts = in_transaction(work)
    if as_json:
        echo_json(counts)
        return
    typer.echo(
        f"encrypted again with CAURI_SECRET_KEY: {counts['connectors']} connector account(s), "
        f"{counts['webhooks']} webhook secret(s), {counts['staff_totp']} staff TOTP secret(s); "
        f"sealed from clear: {counts['webhooks_sealed_from_clear']} webhook secret(s); "
        f"already current: {counts['already_current']}"
    )
    typer.echo("CAURI_PREVIOUS_SECRET_KEYS can now be emptied (on every process).")
