"""Who acts: a staff member signed in to the console, whoever runs the CLI on the server, a
member of a merchant's team signed in to the dashboard, or the worker on its own schedule."""

from __future__ import annotations

import getpass
import os
import uuid
from dataclasses import dataclass
from typing import Literal

ActorKind = Literal["staff", "cli", "member", "worker"]


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    # As shown in the audit log: the person's email, or `cli:<os user>`.
    name: str
    # The person's account (cauri.models.people.User: staff or a merchant's member).
    staff_account_id: uuid.UUID | None = None

    @classmethod
    def cli(cls) -> Actor:
        return cls("cli", f"cli:{_os_user()}")

    @classmethod
    def worker(cls, task: str) -> Actor:
        """A job the worker runs on its own schedule (the daily reconciliation)."""
        return cls("worker", f"worker:{task}")

    @classmethod
    def staff(cls, email: str, account_id: uuid.UUID) -> Actor:
        return cls("staff", email, account_id)

    @classmethod
    def member(cls, email: str, account_id: uuid.UUID) -> Actor:
        return cls("member", email, account_id)

    @classmethod
    def recorded(cls, name: str, staff_account_id: uuid.UUID | None) -> Actor:
        """The actor a row recorded by its name and staff account (an approval's)."""
        return cls("cli", name) if staff_account_id is None else cls.staff(name, staff_account_id)

    @property
    def key(self) -> str:
        """The person, whatever name they show: their staff account (an email may change),
        else their name. Two actions are by the same person when their keys are equal."""
        if self.staff_account_id is not None:
            return f"{self.kind}:{self.staff_account_id}"
        return self.name


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        # A container's user may have no name: no variable, no passwd entry.
        return f"uid{os.getuid()}"
