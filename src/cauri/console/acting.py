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

from cauri.audit.actor import Actor
from cauri.console.auth import SignedIn
from cauri.console.rendering import templates
from cauri.staff.actions import StaffAction
from cauri.staff.roles import Permission, allows


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
