"""`cauri secrets rotate`: every secret kept at rest (connector credentials, webhook signing
secrets, staff TOTP secrets) encrypted again with CAURI_SECRET_KEY, after a key change put the
old one in CAURI_PREVIOUS_SECRET_KEYS (cauri.connectors.secrets). In the caller's one
transaction, its rows locked: all of it or nothing (a blob no key opens refuses the whole
rotation, naming its owner). Idempotent: a blob the current key already made is left as it
is. Webhook secrets still in clear (written before migration 0025) are sealed on the way.
The audit log records the counts, never a secret."""

from __future__ import annotations

from collections import Counter

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import record
from cauri.connectors.secrets import SecretBox, keyring
from cauri.merchants import webhook_secrets
from cauri.models import ConnectorAccount, User, WebhookEndpoint
from cauri.people import totp
from cauri.runtime import Runtime

ROTATE, SEAL = "secrets.rotate", "secrets.seal"
RESOURCE_TYPE, RESOURCE_ID = "keyring", "CAURI_SECRET_KEY"


async def rotate(session: AsyncSession, runtime: Runtime, actor: Actor) -> dict[str, int]:
    """How many blobs were encrypted again, by table, how many webhook secrets were sealed
    from clear, and how many were already under the current key."""
    box = keyring(runtime.settings)
    counts: Counter[str] = Counter()
    accounts = await session.scalars(
        select(ConnectorAccount).order_by(ConnectorAccount.name).with_for_update()
    )
    for account in accounts:
        # `updated_at` is left alone: the credentials are the same, nothing to rebuild.
        account.secrets = _resealed(box, account.name, account.secrets, counts, "connectors")
    staff = await session.scalars(
        select(User).where(User.totp_secret.is_not(None)).order_by(User.id).with_for_update()
    )
    for member in staff:
        assert member.totp_secret is not None
        label = totp.label(member.id)
        member.totp_secret = _resealed(box, label, member.totp_secret, counts, "staff_totp")
    endpoints = await session.scalars(
        select(WebhookEndpoint)
        .where(WebhookEndpoint.sealed_secret.is_not(None))
        .order_by(WebhookEndpoint.merchant_id, WebhookEndpoint.livemode)
        .with_for_update()
    )
    for endpoint in endpoints:
        assert endpoint.sealed_secret is not None
        label = webhook_secrets.label(endpoint.merchant_id, endpoint.livemode)
        endpoint.sealed_secret = _resealed(box, label, endpoint.sealed_secret, counts, "webhooks")
    # After: those sealed now are under the new key already, and not counted twice.
    counts["webhooks_sealed_from_clear"] = await _seal_clear(session, box)
    await session.flush()
    done = {
        name: counts[name]
        for name in ("connectors", "staff_totp", "webhooks", "webhooks_sealed_from_clear")
    } | {"already_current": counts["already_current"]}
    await record(
        session, actor, ROTATE, RESOURCE_TYPE, RESOURCE_ID, None, done, at=runtime.clock.now()
    )
    return done


async def seal_clear(session: AsyncSession, runtime: Runtime, actor: Actor) -> int:
    """Seals the webhook secrets still in clear (`cauri migrate` and `cauri serve` with
    CAURI_SECRET_KEY set, after the migrations), audited when there were any; reads no other
    blob, so a connector whose key was lost never stops a server from starting."""
    sealed = await _seal_clear(session, keyring(runtime.settings))
    if sealed:
        after = {"webhooks_sealed_from_clear": sealed}
        await record(
            session, actor, SEAL, RESOURCE_TYPE, RESOURCE_ID, None, after, at=runtime.clock.now()
        )
    return sealed


async def _seal_clear(session: AsyncSession, box: SecretBox) -> int:
    endpoints = (
        await session.scalars(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.sealed_secret.is_(None))
            .order_by(WebhookEndpoint.merchant_id, WebhookEndpoint.livemode)
            .with_for_update()
        )
    ).all()
    for endpoint in endpoints:
        assert endpoint.secret is not None  # the table's check: one of the two
        endpoint.sealed_secret = webhook_secrets.seal(
            box, endpoint.merchant_id, endpoint.livemode, endpoint.secret
        )
        endpoint.secret = None
    await session.flush()
    return len(endpoints)


def _resealed(box: SecretBox, label: str, blob: bytes, counts: Counter[str], kind: str) -> bytes:
    resealed = box.reseal(label, blob)
    counts[kind if resealed is not None else "already_current"] += 1
    return blob if resealed is None else resealed
