"""Writing the audit log and reading it back (`cauri audit list`, the console's audit page)."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit import chain
from cauri.audit.actor import Actor
from cauri.kit.pagination import Page, paginate
from cauri.kit.period import Period
from cauri.models import AuditEntry, User

REDACTED = "[redacted]"
T = TypeVar("T")
# What may be shown of a resource before and after an action (None: it does not exist).
State = Callable[[], Awaitable[Mapping[str, Any] | None]]

# A field named so holds a secret whatever its value: API keys, webhook signing secrets,
# connector credentials, passwords, key digests.
_SECRET_NAMES = frozenset({"key", "secret", "secrets", "password", "token", "credentials"})
_SECRET_SUFFIXES = ("_key", "_secret", "_secrets", "_password", "_token", "_hash")
# A secret Cauri makes, wherever it shows up (a reason someone pasted one into).
_SECRET_TEXT = re.compile(r"\b(sk_(?:test|live)_|whsec_)[A-Za-z0-9_\-]+")


@dataclass(frozen=True)
class AuditFilter:
    actor: str | None = None  # the actor's name, exactly: `cli:root`, `awa@cauri.example`
    action: str | None = None  # `payout.approve`
    resource_type: str | None = None
    resource_id: str | None = None
    period: Period = field(default_factory=Period)
    # A merchant's id: only what its team's members did (its dashboard's log).
    team_of: str | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found = self.period.conditions(AuditEntry.at)
        if self.team_of is not None:
            team = select(User.id).where(User.merchant_id == self.team_of)
            found += [AuditEntry.actor_kind == "member", AuditEntry.staff_account_id.in_(team)]
        for column, wanted in (
            (AuditEntry.actor_name, self.actor),
            (AuditEntry.action, self.action),
            (AuditEntry.resource_type, self.resource_type),
            (AuditEntry.resource_id, self.resource_id),
        ):
            if wanted is not None:
                found.append(column == wanted)
        return found


async def record(
    session: AsyncSession,
    actor: Actor,
    action: str,
    resource_type: str,
    resource_id: str,
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    reason: str | None = None,
    *,
    at: datetime,
) -> AuditEntry:
    """Adds the entry to the caller's transaction: it is kept if, and only if, the action
    is. `before` and `after` are the fields that matter (None: the resource did not exist,
    or no longer does); secrets are written as `[redacted]` whatever the caller passed."""
    entry = AuditEntry(
        at=at,
        actor_kind=actor.kind,
        actor_name=actor.name,
        staff_account_id=actor.staff_account_id,
        action=action,
        resource_type=resource_type,
        resource_id=resource_id,
        before=None if before is None else _fields(before),
        after=None if after is None else _fields(after),
        reason=None if reason is None else _SECRET_TEXT.sub(rf"\1{REDACTED}", reason),
    )
    await chain.append(session, entry)
    session.add(entry)
    await session.flush()
    return entry


def _fields(values: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(name): REDACTED if _is_secret(str(name)) else _jsonable(value)
        for name, value in values.items()
    }


def _is_secret(name: str) -> bool:
    lowered = name.lower()
    return lowered in _SECRET_NAMES or lowered.endswith(_SECRET_SUFFIXES)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _fields(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    if isinstance(value, str):
        return _SECRET_TEXT.sub(rf"\1{REDACTED}", value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bytes):
        return REDACTED  # an encrypted blob, or worse
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


_NEWEST_FIRST = (AuditEntry.at.desc(), AuditEntry.id.desc())


async def search(
    session: AsyncSession, wanted: AuditFilter, page: Page
) -> tuple[Sequence[AuditEntry], int]:
    """One page of the matching entries, newest first, and how many match in all."""
    return await paginate(session, AuditEntry, wanted.conditions(), _NEWEST_FIRST, page)


async def stream(session: AsyncSession, wanted: AuditFilter) -> AsyncIterator[AuditEntry]:
    """Every matching entry, oldest first (a record to read in order), fetched in batches:
    an export of years of entries never sits in memory whole."""
    statement = (
        select(AuditEntry)
        .where(*wanted.conditions())
        .order_by(AuditEntry.at, AuditEntry.id)
        .execution_options(yield_per=500)
    )
    async for entry in await session.stream_scalars(statement):
        yield entry


def entry_row(entry: AuditEntry) -> dict[str, Any]:
    """An entry as the CLI prints it (`--json`) and the export writes it, field by field."""
    return chain.fields(entry) | {"chain_hash": entry.chain_hash}


async def audited(
    session: AsyncSession,
    actor: Actor,
    action: str,
    resource: tuple[str, str],
    state: State,
    change: Callable[[], Awaitable[T]],
    reason: str | None = None,
    *,
    at: datetime,
) -> T:
    """Every audited action's pattern: the state of `resource` (its type and id) before, the
    domain service's change, the state after, both in the audit log."""
    before = await state()
    result = await change()
    await session.flush()  # a service may only have set attributes
    after = await state()
    await record(session, actor, action, *resource, before, after, reason, at=at)
    return result
