"""What a merchant's team does from the dashboard, through the same services as the API (no
rule written twice), each audited with the member as its actor."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import audited, record
from cauri.checkout.links import payment_links
from cauri.checkout.schemas import PaymentLinkCreate, link_object
from cauri.kit.errors import Conflict, NotFound
from cauri.kit.ids import parse_uuid
from cauri.merchants.caller import Caller
from cauri.models import PaymentLink, Refund, User
from cauri.payments.service import payments
from cauri.people import accounts
from cauri.people.accounts import IssuedLink
from cauri.people.realm import MERCHANT
from cauri.refunds.schemas import RefundCreate
from cauri.refunds.service import refunds
from cauri.runtime import Runtime

REFUND_PAYMENT = "payment.refund"
T = TypeVar("T")


async def refund(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    caller: Caller,
    payment_reference: str,
    fields: Mapping[str, Any],
) -> Refund:
    """As `POST /payments/{reference}/refund` with `fields` as its body (its rules, its
    refusals): no amount refunds all that remains."""
    body = RefundCreate.of(fields)
    payment = await payments.get(session, caller, payment_reference)

    async def state() -> dict[str, object]:
        return {"status": payment.status, "amount_refunded": payment.amount_refunded}

    async def change() -> Refund:
        made, _ = await refunds.create(session, runtime, caller, str(payment.id), body)
        await session.refresh(payment)
        return made

    resource = ("payment", str(payment.id))
    now = runtime.clock.now()
    return await audited(
        session, actor, REFUND_PAYMENT, resource, state, change, body.reason, at=now
    )


# --- payment links ---

CREATE_LINK = "payment_link.create"
DEACTIVATE_LINK = "payment_link.deactivate"


async def create_link(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    caller: Caller,
    fields: Mapping[str, Any],
    base_url: str | None,
) -> PaymentLink:
    """As `POST /payment-links` with `fields` as its body."""
    body = PaymentLinkCreate.of(fields)
    link, _ = await payment_links.create(session, runtime, caller, body, base_url)
    after = link_object(link)
    at = runtime.clock.now()
    await record(session, actor, CREATE_LINK, "payment_link", link.reference, None, after, at=at)
    return link


async def deactivate_link(
    session: AsyncSession, runtime: Runtime, actor: Actor, caller: Caller, reference: str
) -> PaymentLink:
    """As `POST /payment-links/{reference}/deactivate`."""
    link = await payment_links.get(session, caller, reference)

    async def state() -> dict[str, object]:
        return {"active": link.active}

    async def change() -> PaymentLink:
        return await payment_links.deactivate(session, runtime, caller, reference)

    resource = ("payment_link", link.reference)
    at = runtime.clock.now()
    return await audited(session, actor, DEACTIVATE_LINK, resource, state, change, at=at)


# --- the team ---------------------------------------------------------------------------

INVITE = "team.invite"
SET_ROLE = "team.set_role"
DISABLE = "team.disable"
LINK = "team.link"


async def _on_team(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    action: str,
    change: Callable[[], Awaitable[T]],
    concerned: Callable[[T], uuid.UUID] | None = None,
) -> T:
    """A change of the team, audited with the team before and after. `concerned` names the
    member whose sign-in the change hands over (an invitation, a link): the entry's after
    carries their `id`, as the staff's own do, for the rules of two-person approvals
    (cauri.audit.approvers)."""
    done: list[T] = []

    async def team() -> dict[str, Any]:
        row = await accounts.team_row(session, merchant_id)
        if done and concerned is not None:
            row["id"] = str(concerned(done[0]))
        return row

    async def changed() -> T:
        done.append(await change())
        return done[0]

    resource = ("merchant", merchant_id)
    return await audited(session, actor, action, resource, team, changed, at=runtime.clock.now())


def _linked(issued: IssuedLink) -> uuid.UUID:
    return issued.account.id


async def _member(session: AsyncSession, merchant_id: str, account_id: str) -> User:
    """A member of the merchant's team, locked; another merchant's is as unknown as none."""
    key = parse_uuid(account_id)
    found = None if key is None else await session.get(User, key, with_for_update=True)
    if found is None or found.realm != MERCHANT.name or found.merchant_id != merchant_id:
        raise NotFound("Membre introuvable.")
    return found


async def _keep_an_owner(session: AsyncSession, member: User) -> None:
    """Refuses to leave the team without an active owner (who else would manage it?)."""
    owners = [
        m
        for m in await accounts.list_accounts(session, MERCHANT, member.merchant_id)
        if m.role == "owner" and m.disabled_at is None and m.id != member.id
    ]
    if not owners:
        raise Conflict("L'équipe garde au moins un propriétaire actif.")


async def invite(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    email: str,
    role: str,
) -> IssuedLink:
    """A teammate and their one-time link (the owner hands it over)."""

    async def create() -> IssuedLink:
        return await accounts.invite_member(
            session, merchant_id, email=email, role=role, now=runtime.clock.now()
        )

    return await _on_team(session, runtime, actor, merchant_id, INVITE, create, _linked)


async def set_role(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    account_id: str,
    role: str,
) -> User:
    """A member's new role; its sessions end (the next sign-in asks a second factor if the
    role needs one)."""

    async def change() -> User:
        member = await _member(session, merchant_id, account_id)
        accounts.checked_role(MERCHANT, role)
        if member.role == "owner" and role != "owner":
            await _keep_an_owner(session, member)
        member.role = role
        await accounts.revoke_sessions(session, member, runtime.clock.now())
        return member

    return await _on_team(session, runtime, actor, merchant_id, SET_ROLE, change)


async def disable(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, account_id: str
) -> User:
    """No more sign-in for the member; their sessions end at once."""

    async def change() -> User:
        member = await _member(session, merchant_id, account_id)
        if member.role == "owner":
            await _keep_an_owner(session, member)
        return await accounts.disable(session, member, runtime.clock.now())

    return await _on_team(session, runtime, actor, merchant_id, DISABLE, change)


async def link(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, account_id: str
) -> IssuedLink:
    """A new one-time link for a member who lost their password or device: it resets both."""

    async def issue() -> IssuedLink:
        member = await _member(session, merchant_id, account_id)
        return await accounts.issue_link(session, member, runtime.clock.now())

    return await _on_team(session, runtime, actor, merchant_id, LINK, issue, _linked)
