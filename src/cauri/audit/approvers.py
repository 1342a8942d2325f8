"""Who may give the approvals of a two-person money action: the one rule set of payouts
held above the platform's `payout_dual_approval_above` (cauri.payouts.service) and of the
other live money actions above it (cauri.staff.approvals), in the console and the CLI alike,
and of a merchant's team's payouts above its owner's threshold (cauri.team.drafts), where the
accounts are the team's members.

- Each approval of a two-person action names a staff account: the console's signed-in
  person, or the CLI's `--as EMAIL --totp CODE`. The CLI without `--as` (`cli:<os user>`)
  is nobody in particular: anyone with a shell on the server could be it, so it may act
  alone where one person suffices, never as one of two.
- The two approvals are by two different accounts (cauri.audit.Actor.key).
- Neither of the two may have created the other's account, or given it a sign-in link (which
  resets its password and second factor), in the last 24 hours, as the audit log records
  it (`staff.create`, `staff.link`): whoever just set an account up may hold its sign-in.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, exists, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.kit.errors import Conflict
from cauri.models import AuditEntry

# What puts an account in someone else's hands for a while: its creation, its sign-in link
# (the staff's, and a merchant's team's: cauri.team.actions).
VOUCHING_ACTIONS = ("staff.create", "staff.link", "team.invite", "team.link")
VOUCHING_WINDOW = timedelta(hours=24)


def named(actor: Actor) -> None:
    """Refuses an approval of a two-person action by no staff account."""
    if actor.staff_account_id is None:
        raise Conflict(
            "Deux approbations sont nécessaires : chacune nomme un compte du personnel "
            "(en ligne de commande : --as EMAIL --totp CODE)."
        )


async def check_second(session: AsyncSession, first: Actor, second: Actor, now: datetime) -> None:
    """Refuses `second` as the other person of `first`'s approval (see the module)."""
    named(second)
    if first.key == second.key:
        raise Conflict(
            "Vous avez déjà approuvé : l'approbation d'une autre personne est nécessaire."
        )
    if await _vouched(session, first, second, now):
        raise Conflict(
            "Approbation refusée : l'un de vous a créé le compte de l'autre ou lui a donné un "
            "lien de connexion il y a moins de 24 heures ; une troisième personne doit approuver."
        )


async def _vouched(session: AsyncSession, first: Actor, second: Actor, now: datetime) -> bool:
    def by_for(actor: Actor, account: Actor) -> ColumnElement[bool]:
        return and_(
            AuditEntry.staff_account_id == actor.staff_account_id,
            AuditEntry.after["id"].astext == str(account.staff_account_id),
        )

    found = await session.scalar(
        select(
            exists().where(
                AuditEntry.action.in_(VOUCHING_ACTIONS),
                AuditEntry.at > now - VOUCHING_WINDOW,
                or_(by_for(second, first), by_for(first, second)),
            )
        )
    )
    return bool(found)
