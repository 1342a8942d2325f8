"""The audit log: every action of the staff (console) and of the CLI, who did it, when, to
which resource, with the state before and after and a reason. Written in the action's own
transaction (it is kept exactly when the action is), append-only in the database."""

from cauri.audit.actor import Actor
from cauri.audit.log import record

__all__ = ["Actor", "record"]
