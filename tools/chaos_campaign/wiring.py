"""Cauri set up as a payment company runs it for the campaign: the five connector accounts
and their routes (`cauri connectors add`, `cauri routes set`), a merchant with a live key and
a live balance to pay out from (`cauri merchants create`, `cauri merchants credit`), and the
settings its processes share, with the operators' poll schedule shortened."""

from __future__ import annotations

import os
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.balance.service import credit
from cauri.connectors.secrets import keyring
from cauri.connectors.service import AccountDefinition, connectors
from cauri.kit.db import unit_of_work
from cauri.merchants.service import merchants
from cauri.runtime import Runtime
from tools.chaos_campaign.operators import Rig

FLOAT = 500_000_000  # XOF the merchant's live balance starts with, for its payouts


@dataclass(frozen=True)
class Schedule:
    """How quickly Cauri gives up waiting on an operator (seconds)."""

    operator_timeout: float
    poll_delays: str
    poll_interval: float
    poll_horizon: float


def environment(url: str, secret_key: str, public_url: str, schedule: Schedule) -> dict[str, str]:
    """CAURI_* for `cauri serve` and `cauri worker`: one database, one key, one public URL."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("CAURI_")}
    return inherited | {
        "CAURI_DATABASE_URL": url,
        "CAURI_SECRET_KEY": secret_key,
        "CAURI_PUBLIC_URL": public_url,
        "CAURI_RATE_LIMIT": "1000000/minute",
        "CAURI_CALLBACK_RATE_LIMIT": "1000000/minute",
        "CAURI_OPERATOR_TIMEOUT": str(schedule.operator_timeout),
        "CAURI_OPERATOR_CONNECT_TIMEOUT": "1",
        "CAURI_OPERATOR_POLL_DELAYS": schedule.poll_delays,
        "CAURI_OPERATOR_POLL_INTERVAL": str(schedule.poll_interval),
        "CAURI_OPERATOR_POLL_HORIZON": str(schedule.poll_horizon),
        "CAURI_WORKER_POLL_INTERVAL": "0.2",
        # A killed worker's jobs are taken again once their lease runs out.
        "CAURI_JOB_LEASE_SECONDS": "10",
        "CAURI_LOG_JSON": "true",
    }


async def wire(runtime: Runtime, rigs: list[Rig]) -> tuple[str, str]:
    """The connectors, their routes and the merchant; its id and live key."""
    now = runtime.clock.now()
    async with unit_of_work(runtime.sessionmaker) as session:
        for rig in rigs:
            definition = AccountDefinition(
                name=rig.connector,
                kind=rig.kind,
                environment=rig.environment,
                base_url=rig.base_url,
                settings=rig.settings(),
                secrets=rig.secrets(),
            )
            await connectors.add(
                session, definition, secret_key=runtime.settings.secret_key, now=now
            )
            for route in rig.routes:
                changes = dict.fromkeys(route.actions, rig.connector)
                await connectors.set_routes(session, route.operator, changes, now)
        return await funded_merchant(session, runtime, "Boutique du chaos", livemode=True)


async def funded_merchant(
    session: AsyncSession, runtime: Runtime, name: str, *, livemode: bool
) -> tuple[str, str]:
    """A merchant, its id and its key of that mode, with a balance in that mode to pay out
    from (`cauri merchants create`, `cauri merchants credit`)."""
    now = runtime.clock.now()
    new = await merchants.create(
        session, name=name, status="active", now=now, box=keyring(runtime.settings)
    )
    await credit(
        session,
        new.merchant.id,
        livemode=livemode,
        amount=Decimal(FLOAT),
        currency="XOF",
        reason="fonds de roulement de la campagne",
        now=now,
    )
    return new.merchant.id, new.live_key if livemode else new.test_key
