"""The audit log as a hash chain: the append-only trigger stops this application, not the
table's owner, who may drop it. So each entry also holds `chain_hash` = SHA-256 of its
predecessor's hash followed by the entry's canonical form (`previous_hash` keeps the
predecessor's, the first entry's is `GENESIS`): a changed, deleted or inserted entry breaks
the chain from there on (`cauri audit verify`).

What the chain cannot stop is its owner rewriting it whole from some entry on, hashes
included: a hash kept elsewhere (the daily export carries each entry's) anchors it, and
`verify` checks that such an anchor is still in the chain.

Appends are serialized by a transaction-scoped advisory lock, held from the entry's append
until its transaction ends: the predecessor is the last committed entry, the entry's id is
taken under the lock (so ids increase in chain order; a rolled-back append only leaves a
gap) and no two entries ever follow the same one (`previous_hash` is unique). Only staff and
CLI actions are audited, a few a minute at most, never a payment or a payout of the API:
the lock costs no hot path."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from decimal import Decimal
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.models import AuditEntry

GENESIS = "0" * 64

_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended('cauri.audit_chain', 0))")
_LAST_AND_NEXT_ID = text(
    "SELECT (SELECT chain_hash FROM audit_log ORDER BY id DESC LIMIT 1) AS previous, "
    "nextval(pg_get_serial_sequence('audit_log', 'id')) AS id"
)


def fields(entry: AuditEntry) -> dict[str, Any]:
    """The entry's own fields, as the log shows them (cauri.audit.log) and hashes them."""
    return {
        "id": entry.id,
        "at": entry.at.astimezone(UTC).isoformat(),
        "actor_kind": entry.actor_kind,
        "actor_name": entry.actor_name,
        "staff_account_id": entry.staff_account_id and str(entry.staff_account_id),
        "action": entry.action,
        "resource_type": entry.resource_type,
        "resource_id": entry.resource_id,
        "reason": entry.reason,
        "before": entry.before,
        "after": entry.after,
    }


def canonical(entry: AuditEntry) -> bytes:
    """The entry's fields as JSON with sorted keys and no spaces, its time in UTC. A number
    is written as PostgreSQL's JSONB gives it back: an integral float (1e20, 2.0) as an
    integer."""
    return json.dumps(
        _numbers_as_stored(fields(entry)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def _numbers_as_stored(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _numbers_as_stored(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_as_stored(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        # Its shortest decimal (1e+20), what JSONB keeps, not its binary value (1e23 is
        # 99999999999999991611392 in binary).
        return int(Decimal(repr(value)))
    return value


def entry_hash(previous_hash: str, entry: AuditEntry) -> str:
    return hashlib.sha256(previous_hash.encode() + canonical(entry)).hexdigest()


async def append(session: AsyncSession, entry: AuditEntry) -> None:
    """Gives the new entry its id and its place in the chain; the caller adds it to its
    transaction, which holds the chain until it ends."""
    await session.execute(_LOCK)
    last = (await session.execute(_LAST_AND_NEXT_ID)).one()
    entry.id = last.id
    entry.previous_hash = last.previous or GENESIS
    entry.chain_hash = entry_hash(entry.previous_hash, entry)


@dataclass(frozen=True)
class Break:
    """The first entry at which the chain no longer holds, and why."""

    entry_id: int
    problem: str


@dataclass
class Verdict:
    entries: int = 0
    head_id: int | None = None
    head_hash: str = GENESIS
    broken: Break | None = None
    # Each anchor asked about: the id of the entry whose hash it is, None if none is.
    anchors: dict[str, int | None] = field(default_factory=dict)

    @property
    def intact(self) -> bool:
        return self.broken is None and None not in self.anchors.values()


async def verify(session: AsyncSession, anchors: Collection[str] = ()) -> Verdict:
    """Walks the whole log in chain (id) order, in batches, recomputing each hash."""
    verdict = Verdict(anchors=dict.fromkeys(anchors))
    async for entry in _in_order(session):
        if verdict.broken is None:
            verdict.broken = _break(entry, verdict.head_id, verdict.head_hash)
        if entry.chain_hash in verdict.anchors:
            verdict.anchors[entry.chain_hash] = entry.id
        verdict.entries += 1
        verdict.head_id, verdict.head_hash = entry.id, entry.chain_hash
    return verdict


def _break(entry: AuditEntry, previous_id: int | None, previous_hash: str) -> Break | None:
    if entry.previous_hash != previous_hash:
        if previous_id is None:
            problem = "it is the first entry but follows another: entries before it deleted"
        else:
            problem = (
                f"it does not follow entry {previous_id}: an entry between them deleted, "
                "or one of them inserted"
            )
        return Break(entry.id, problem)
    if entry.chain_hash != entry_hash(previous_hash, entry):
        return Break(entry.id, "its content no longer matches its hash: changed")
    return None


async def _in_order(session: AsyncSession) -> AsyncIterator[AuditEntry]:
    statement = select(AuditEntry).order_by(AuditEntry.id).execution_options(yield_per=500)
    async for entry in await session.stream_scalars(statement):
        yield entry
