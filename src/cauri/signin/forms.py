"""What the forms of the pages behind a door share: GET forms' (searches, exports) fields read
from the query string and shown back as typed, each refusal as a French message next to its
field (never a 500), and the links to a list's other pages; POST forms' fields, read and
checked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from urllib.parse import urlencode

from fastapi import Request

from cauri.kit import strict_json
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.kit.pagination import MAX_PAGE, Page
from cauri.kit.period import Period
from cauri.signin.door import CSRF_FIELD

# The form's own message when a refusal names no field of it.
WHOLE_FORM = "form"
MODES = {"test": False, "live": True}


@dataclass
class Form:
    values: dict[str, str]  # as typed, shown back in the fields
    errors: dict[str, str] = field(default_factory=dict)  # field -> its message

    @classmethod
    def read(cls, request: Request, names: tuple[str, ...]) -> Form:
        return cls({name: request.query_params.get(name, "").strip() for name in names})

    def optional(self, name: str) -> str | None:
        return self.values[name] or None

    def refuse(self, error: CauriError, renamed: Mapping[str, str] | None = None) -> None:
        """Each field an error names gets its message; `renamed`: a service's name of a field
        -> the form's. An error naming none is the whole form's."""
        for name, messages in (error.details or {}).items():
            shown = (renamed or {}).get(name, name)
            self.errors[shown if shown in self.values else WHOLE_FORM] = messages[0]
        if not error.details:
            self.errors[WHOLE_FORM] = error.message

    def period(self) -> Period:
        """`from` and `to`, each refused on its own (both may be wrong)."""
        start = end = None
        try:
            start = Period.parse(self.optional("from"), None).start
        except CauriError as error:
            self.refuse(error)
        try:
            end = Period.parse(None, self.optional("to")).end
        except CauriError as error:
            self.refuse(error)
        return Period(start, end)

    def livemode(self) -> bool | None:
        mode = self.values["mode"]
        if mode and mode not in MODES:
            self.errors["mode"] = f"Mode inconnu : {mode} (test ou live)."
        return MODES.get(mode)

    def page(self, per_page: int) -> Page:
        text = self.values.get("page") or "1"
        number = int(text) if text.isdigit() else 0
        if not 1 <= number <= MAX_PAGE:
            self.errors[WHOLE_FORM] = f"Numéro de page invalide : {text}."
            number = 1
        return Page(number, per_page)


@dataclass(frozen=True)
class Pager:
    """The links to the pages before and after, the query's other filters kept."""

    page: int
    last: int
    total: int
    previous: str | None
    next: str | None


def pager(request: Request, page: Page, total: int) -> Pager:
    last = max(1, math.ceil(total / page.per_page))

    def link(number: int) -> str:
        query = {name: value for name, value in request.query_params.items() if value}
        return f"{request.url.path}?{urlencode(query | {'page': str(number)})}"

    return Pager(
        page=page.page,
        last=last,
        total=total,
        previous=link(page.page - 1) if page.page > 1 else None,
        next=link(page.page + 1) if page.page < last else None,
    )


def given(**values: object) -> dict[str, object]:
    """A request body from a form's values: a field left empty (None) is left out, as an
    API client leaves out a field it does not give."""
    return {name: value for name, value in values.items() if value is not None}


async def posted(request: Request) -> dict[str, str]:
    """The form's text fields, trimmed; the CSRF token (already checked) left out. A NUL,
    which PostgreSQL cannot store, is refused before any action reads the field."""
    form = await request.form()
    fields = {
        name: value.strip()
        for name, value in form.items()
        if isinstance(value, str) and name != CSRF_FIELD
    }
    for name, value in fields.items():
        if strict_json.unstorable(name + value):
            raise InvalidRequest.field(name, "Le champ contient un caractère interdit (NUL).")
    return fields


def decimal_field(fields: dict[str, str], name: str) -> Decimal | None:
    """`2,5` or `2.5` (fr-FR or not, spaces between thousands allowed); empty: none."""
    text = fields.get(name, "").replace(" ", "").replace("\u202f", "").replace(",", ".")
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite():
        raise InvalidRequest.field(name, f"Nombre invalide : {fields[name]}.")
    return value
