"""Authentication (spec: Authentication): who calls, in which environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import bindparam, select

from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import KeyExpired, MerchantInactive, Unauthorized
from cauri.kit.prepared import Prepared
from cauri.merchants import keys
from cauri.models import ApiKey, Merchant


@dataclass(frozen=True)
class Caller:
    merchant_id: str
    livemode: bool


# Every request runs it: prepared once, run past the session's machinery (kit.prepared), a
# read that opens no transaction.
_CALLER = Prepared(
    select(ApiKey.livemode, ApiKey.expires_at, ApiKey.revoked_at, Merchant.id, Merchant.status)
    .join(Merchant, Merchant.id == ApiKey.merchant_id)
    .where(ApiKey.key_hash == bindparam("digest"))
)


async def authenticate(request: Request, session: SessionDep, runtime: RuntimeDep) -> Caller:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key or " " in key.strip():
        raise Unauthorized()
    key = key.strip()
    if keys.livemode_of(key) is None:
        raise Unauthorized()
    row = await _CALLER.fetchrow(session, {"digest": keys.digest(key)})
    if row is None:
        raise Unauthorized()
    livemode, expires_at, revoked_at, merchant_id, status = row
    # Read on every request, never cached: a revocation holds on running servers at once.
    if revoked_at is not None:
        raise Unauthorized()
    if expires_at is not None and expires_at <= runtime.clock.now():
        raise KeyExpired()
    if livemode and status != "active":
        raise MerchantInactive()
    return Caller(merchant_id, livemode)


CallerDep = Annotated[Caller, Depends(authenticate)]
