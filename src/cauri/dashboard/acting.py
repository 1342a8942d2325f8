"""What the team's actions on the dashboard share: who acts (the audit log's actor), on whose
account and in which environment (the API's caller), and the refusal of live money while the
merchant is not active (its live data stay readable)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import record
from cauri.dashboard.auth import SignedIn
from cauri.kit.db import unit_of_work
from cauri.kit.errors import MerchantInactive
from cauri.merchants.caller import Caller
from cauri.merchants.service import merchants
from cauri.runtime import Runtime

EXPORT = "dashboard.export"


async def record_export(runtime: Runtime, member: SignedIn, asked: dict[str, object]) -> None:
    """A file taken out of the dashboard, audited (in a transaction of its own, before the
    file streams): what was asked for."""
    async with unit_of_work(runtime.sessionmaker) as session:
        now = runtime.clock.now()
        await record(
            session, actor(member), EXPORT, "merchant", member.merchant_id, None, asked, at=now
        )


def actor(member: SignedIn) -> Actor:
    return Actor.member(member.email, member.account_id)


async def caller(session: AsyncSession, member: SignedIn, livemode: bool) -> Caller:
    """The member's merchant in the environment, as the API's key of that environment would
    be: live refused while the merchant is not active."""
    if livemode and (await merchants.get(session, member.merchant_id)).status != "active":
        raise MerchantInactive(
            "Le compte marchand n'est pas actif : ses données live se consultent, rien ne s'y fait."
        )
    return Caller(member.merchant_id, livemode)
