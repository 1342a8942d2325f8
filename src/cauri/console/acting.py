"""What every console action shares: the staff member as the audit log's actor, the fields
of the posted form, and the action run so that a refusal is a message on its page (never a
500) with nothing of it written.

A page catches the refusal to show it, so the request's unit of work, which would roll back
an error it sees, sees none: the action runs in a savepoint that a refusal rolls back (its
approval, its audit entry, whatever it had written), and the page answers with the
refusal's status.

An action that calls an operator's network commits the request's transaction, savepoint
included, before the call (calls.engage: record → commit → call → apply): what it wrote
until then is kept, its audit entry with it (cauri.staff.actions), and what it writes after
is the call's answer, which a refusal raised after the call does not undo (the savepoint is
gone: there is nothing to roll back to)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import Decimal, InvalidOperation
from typing import TypeVar

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.console.auth import SignedIn
from cauri.console.rendering import templates
from cauri.kit import strict_json
from cauri.kit.errors import CauriError, InvalidRequest
from cauri.signin.door import CSRF_FIELD
from cauri.staff.actions import StaffAction
from cauri.staff.roles import Permission, allows

T = TypeVar("T")


def actor(staff: SignedIn) -> Actor:
    return Actor.staff(staff.email, staff.account_id)


def may(staff: SignedIn | None, name: str) -> bool:
    """Whether the signed-in person's role grants the permission `name`: a page shows the
    forms of the actions it may take, and no other (the action checks again)."""
    return staff is not None and allows(staff.role, Permission(name))


# For the pages that are not the actions' own (a payout's page shows its approval forms).
templates.env.globals["may"] = may


def permission(action: StaffAction) -> Permission:
    """The permission the action names (cauri.staff.actions): the page asks no other."""
    return Permission(action.permission)


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


async def attempt(session: AsyncSession, change: Callable[[], Awaitable[T]]) -> T | CauriError:
    """The change's result, or its refusal with nothing of it kept (but what a refusal
    records as a fact: `keeps_writes`)."""
    savepoint = await session.begin_nested()
    try:
        result = await change()
    except CauriError as refusal:
        if savepoint.is_active:
            await (savepoint.commit() if refusal.keeps_writes else savepoint.rollback())
        return refusal
    if savepoint.is_active:
        await savepoint.commit()
    return result
