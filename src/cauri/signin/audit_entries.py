"""The audit log's entries as the pages behind a door show them (the console's log, a
merchant's team's): each field's value before and after the action, as JSON text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cauri.models import AuditEntry

# Where each kind of actor acted.
ACTOR_PLACES_FR = {
    "staff": "console",
    "cli": "ligne de commande",
    "member": "tableau de bord",
    "worker": "tâche planifiée",
}


@dataclass(frozen=True)
class Change:
    """One field of an entry: its value before and after, as JSON text (None: absent)."""

    name: str
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _shown(values: Mapping[str, Any] | None, name: str) -> str | None:
    if values is None or name not in values:
        return None
    return json.dumps(values[name], ensure_ascii=False, sort_keys=True)


def changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[Change]:
    """Every field either state has, in the order they were recorded."""
    names = dict.fromkeys([*(before or {}), *(after or {})])
    return [Change(name, _shown(before, name), _shown(after, name)) for name in names]


def shown(entries: Sequence[AuditEntry]) -> list[tuple[AuditEntry, list[Change]]]:
    """The entries with their changes, for `signin/audit_entries.html`."""
    return [(entry, changes(entry.before, entry.after)) for entry in entries]
