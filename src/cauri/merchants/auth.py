"""Authentication (spec: Authentication): who calls, in which environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Depends, Request
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import CauriError, KeyExpired, MerchantInactive, Unauthorized
from cauri.kit.prepared import Prepared
from cauri.merchants import contract, keys
from cauri.merchants.caller import Caller
from cauri.operators import catalogue
from cauri.runtime import Runtime

# Every request runs it: prepared once, run past the session's machinery (kit.prepared), a
# read that opens no transaction.
_CALLER_SQL = (
    "SELECT k.livemode, k.expires_at, k.revoked_at, m.id, m.status "
    "FROM api_keys k JOIN merchants m ON m.id = k.merchant_id WHERE k.key_hash = :digest"
)
_CALLER = Prepared(text(_CALLER_SQL))
# A new payment's, instalment's or payout's: the key, and the fee terms of the mode it pays
# with (a payout's: `payout`), in one round trip.
_CALLER_AND_TERMS = Prepared(
    text(
        f"SELECT c.*, t.* FROM ({_CALLER_SQL}) AS c "  # noqa: S608 (constants only)
        f"LEFT JOIN LATERAL ({contract.terms_sql('c.id')}) AS t ON true"
    )
)


async def authenticate(request: Request, session: SessionDep, runtime: RuntimeDep) -> Caller:
    digest = keys.digest(_presented_key(request))
    return _checked(await _CALLER.fetchrow(session, {"digest": digest}), runtime, request)


async def authenticate_payment(
    request: Request, session: SessionDep, runtime: RuntimeDep
) -> Caller:
    """`authenticate`, for a new payment or instalment: the fee terms of the mode its body
    names are read with the key, one round trip fewer on the hot path, and
    `contract.read_terms` finds them in the request's session. A body that names no known
    mode: the key alone."""
    digest = keys.digest(_presented_key(request))
    return await _with_terms(request, session, runtime, digest, await _named_mode(request))


async def authenticate_payout(request: Request, session: SessionDep, runtime: RuntimeDep) -> Caller:
    """`authenticate`, for a new payout: the payout fee terms are read with the key."""
    digest = keys.digest(_presented_key(request))
    return await _with_terms(request, session, runtime, digest, contract.PAYOUT)


async def _with_terms(
    request: Request, session: AsyncSession, runtime: Runtime, digest: str, mode: str | None
) -> Caller:
    if mode is None:
        return _checked(await _CALLER.fetchrow(session, {"digest": digest}), runtime, request)
    row = await _CALLER_AND_TERMS.fetchrow(session, {"digest": digest, "modes": [mode]})
    caller = _checked(row, runtime, request)
    assert row is not None  # _checked refuses an unknown key
    contract.read_ahead(session, caller.merchant_id, contract.parsed_terms([tuple(row)[5:]]))
    return caller


def _presented_key(request: Request) -> str:
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not key or " " in key.strip():
        raise Unauthorized()
    key = key.strip()
    if keys.livemode_of(key) is None:
        raise Unauthorized()
    return key


def _checked(row: Sequence[Any] | None, runtime: Runtime, request: Request) -> Caller:
    if row is None:
        raise Unauthorized()
    livemode, expires_at, revoked_at, merchant_id, status = tuple(row)[:5]
    caller = Caller(merchant_id, livemode)
    # Whose request it is, refused or not: its errors are the account's (api_errors).
    request.state.caller = caller
    # Read on every request, never cached: a revocation holds on running servers at once.
    if revoked_at is not None:
        raise Unauthorized()
    if expires_at is not None and expires_at <= runtime.clock.now():
        raise KeyExpired()
    if livemode and status != "active":
        raise MerchantInactive()
    return caller


async def _named_mode(request: Request) -> str | None:
    """The fee terms' name of the mode the body names, if it names a known one. A body
    that cannot be read is refused in its place, after authentication."""
    try:
        body = await request.json()
    except CauriError:
        return None
    operator = body.get("operator") if isinstance(body, dict) else None
    mode = catalogue.find(operator) if isinstance(operator, str) else None
    return None if mode is None else mode.operator.lower()


# Every dependency that checks a key (the OpenAPI document lists their refusals).
KEY_CHECKS = (authenticate, authenticate_payment, authenticate_payout)
CallerDep = Annotated[Caller, Depends(authenticate)]
PaymentCallerDep = Annotated[Caller, Depends(authenticate_payment)]
PayoutCallerDep = Annotated[Caller, Depends(authenticate_payout)]
