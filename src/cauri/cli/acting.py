"""Who runs a CLI command that moves live money: the anonymous operator (`cli:<os user>`),
or, with `--as EMAIL --totp CODE`, that staff account, proven by its second factor. Where
two people's approvals are needed (above the platform's `payout-dual-approval-above`), each
names its account (cauri.audit.approvers); elsewhere the options may be left out and the
command works as it always has. What a held action prints is shared here too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from cauri.audit.actor import Actor
from cauri.models import MoneyApproval
from cauri.people import sign_in
from cauri.staff import approvals

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from cauri.runtime import Runtime


AsOption = Annotated[
    str | None,
    typer.Option(
        "--as",
        help="Your staff account's email, with --totp: required where two people's approvals "
        "are needed (above the platform's payout-dual-approval-above).",
    ),
]
TotpOption = Annotated[
    str | None, typer.Option("--totp", help="A current code of that account's second factor.")
]


async def acting(
    session: AsyncSession, runtime: Runtime, email: str | None, code: str | None
) -> Actor:
    """The command's actor, in the command's own transaction (the code is spent with it)."""
    if email is None:
        if code is not None:
            raise typer.BadParameter("--totp goes with --as EMAIL", param_hint="--totp")
        return Actor.cli()
    if code is None:
        raise typer.BadParameter("--as EMAIL needs --totp CODE", param_hint="--totp")
    account = await sign_in.named_actor(session, email, code, runtime.clock.now(), runtime.settings)
    return Actor.staff(account.email, account.id)


def held(pending: MoneyApproval) -> dict[str, Any]:
    """A live money action above the dual-approval amount: asked, not done."""
    return {
        "pending_approval": approvals.row(pending),
        "next": f"a second person approves it: cauri approvals approve {pending.id} "
        "--as EMAIL --totp CODE (or in the console, Approbations)",
    }
