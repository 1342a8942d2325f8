"""A request of the API as data: what both clients send, and how the answer is read.

The operations (`cauri_client.operations`) only build these; `Cauri` and `AsyncCauri` send
them, so each operation is written once for both transports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from cauri_client.resources import Resource

T = TypeVar("T")
R = TypeVar("R", bound=Resource)

Json = Mapping[str, Any]
Param = str | int | bool


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request, and how its answer's envelope (`{"success": true, "data": …}`) is read."""

    method: str
    path: str
    read: Callable[[Json], T]
    params: Mapping[str, Param] = field(default_factory=dict)
    body: Json | None = None

    @property
    def replayable(self) -> bool:
        """Whether sending it again after an unknown outcome cannot do a thing twice: reads
        and PUTs can be repeated, a POST only when it carries an `external_id` (spec: Retry
        rules 5)."""
        return self.method != "POST" or bool(self.body and self.body.get("external_id"))


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next: int | None


@dataclass(frozen=True)
class Listing(Generic[T]):
    """A list operation, read page by page (spec: List envelope)."""

    path: str
    item: Callable[[Json], T]
    params: Mapping[str, Param]
    start: int = 1

    def page(self, number: int) -> Call[Page[T]]:
        return Call("GET", self.path, self._read, {**self.params, "page": number})

    def _read(self, envelope: Json) -> Page[T]:
        items = [self.item(entry) for entry in envelope["data"]]
        meta = envelope["meta"]
        # An empty page ends the walk too, should the total shrink while it goes.
        more = items and meta["current_page"] < meta["last_page"]
        return Page(items, meta["current_page"] + 1 if more else None)


def one(kind: type[R]) -> Callable[[Json], R]:
    return lambda envelope: kind.from_json(envelope["data"])


def every(kind: type[R]) -> Callable[[Json], list[R]]:
    return lambda envelope: [kind.from_json(entry) for entry in envelope["data"]]


def path(template: str, *segments: str) -> str:
    """`template` with each `{}` replaced by a segment, escaped: a reference may be the
    merchant's external_id, which can hold a `/` or a `?`."""
    return template.format(*(quote(segment, safe="") for segment in segments))


def given(**values: Any) -> dict[str, Any]:
    """The fields the caller gave: an absent field and a None are both left out (the API
    refuses nothing it does not need), and dates are sent in ISO 8601."""
    return {
        name: value.isoformat() if isinstance(value, date) else value
        for name, value in values.items()
        if value is not None
    }


def listing(kind: type[R], path: str, per_page: int, start: int, **filters: Any) -> Listing[R]:
    """`from_` is sent as `from` (a Python keyword, so not a parameter's name)."""
    sent = {("from" if name == "from_" else name): value for name, value in filters.items()}
    return Listing(path, kind.from_json, given(per_page=per_page, **sent), start)
