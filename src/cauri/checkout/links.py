"""Payment links (issue 25): a lasting address (`/l/{code}`) a merchant shares (a message, a
QR code on a flyer). A visit creates nothing: the customer goes on (and types the amount
when the link has none), and only then is a checkout session opened for them, so that a chat
application's link preview uses nothing up. `uses` counts the sessions completed through
the link; one that would complete past its cap is refunded instead (cauri.checkout.service).
"""

from __future__ import annotations

import string
import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.checkout.schemas import LinkFilters, PaymentLinkCreate
from cauri.checkout.service import (
    CLOSED_LINK,
    NO_PUBLIC_URL,
    checkout_sessions,
    takes_payments,
    typed_amount,
)
from cauri.kit.errors import Conflict, InvalidRequest, NotFound, ServerError
from cauri.kit.ids import prefixed, random_text
from cauri.kit.money import format_major, to_minor
from cauri.kit.pagination import Page
from cauri.merchants.caller import Caller
from cauri.models import CheckoutSession, PaymentLink, lookups
from cauri.payments import rules
from cauri.runtime import Runtime

# 62^10: about 59 bits, beyond guessing at any rate the page bucket allows; a link is meant
# to be shared, so its code guards nothing a visitor could not see anyway.
CODE_LENGTH = 10
_CODE_ALPHABET = string.ascii_letters + string.digits


def _bounds(body: PaymentLinkCreate) -> tuple[int | None, int | None, int | None]:
    currency = body.currency.value
    amount = None if body.amount is None else to_minor(body.amount, currency)
    low = None if body.min_amount is None else to_minor(body.min_amount, currency, "min_amount")
    high = None if body.max_amount is None else to_minor(body.max_amount, currency, "max_amount")
    if amount is not None and (low is not None or high is not None):
        raise InvalidRequest.field(
            "amount", "Un lien à montant fixe ne prend ni min_amount ni max_amount."
        )
    if low is not None and high is not None and low > high:
        raise InvalidRequest.field("min_amount", "min_amount dépasse max_amount.")
    return amount, low, high


def _max_uses(body: PaymentLinkCreate) -> int | None:
    if body.reusable:
        return body.max_uses
    if body.max_uses not in (None, 1):
        raise InvalidRequest.field(
            "max_uses", "Un lien qui n'est pas réutilisable ne prend qu'un paiement."
        )
    return 1


_BY_REFERENCE = lookups.ByReference(
    PaymentLink, PaymentLink.reference, "Lien de paiement introuvable."
)


class PaymentLinkService:
    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: PaymentLinkCreate,
        base_url: str | None,
    ) -> tuple[PaymentLink, bool]:
        """The link, and whether it was made now (False: a replay of `external_id`)."""
        if base_url is None:
            raise ServerError(NO_PUBLIC_URL)
        rules.check_return_url(body.return_url, livemode=caller.livemode)
        now = runtime.clock.now()
        if body.expires_at is not None and body.expires_at <= now:
            raise InvalidRequest.field("expires_at", "La date d'expiration est déjà passée.")
        amount, low, high = _bounds(body)
        code = random_text(_CODE_ALPHABET, CODE_LENGTH)
        values = {
            "id": uuid.uuid4(),
            "reference": prefixed("plink"),
            "code": code,
            "url": f"{base_url.rstrip('/')}/l/{code}",
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": body.external_id,
            "description": body.description,
            "amount": amount,
            "min_amount": low,
            "max_amount": high,
            "currency": body.currency.value,
            "reusable": body.reusable,
            "max_uses": _max_uses(body),
            "active": True,
            "expires_at": body.expires_at,
            "return_url": body.return_url,
            "metadata": body.metadata,
            "created_at": now,
            "updated_at": now,
        }
        created = await lookups.inserted_unless_replayed(session, PaymentLink, values)
        if created is None:
            return await self.get(session, caller, body.external_id or ""), False
        return created, True

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> PaymentLink:
        return await _BY_REFERENCE.get(session, caller, reference)

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, filters: LinkFilters
    ) -> tuple[Sequence[PaymentLink], int]:
        kept = filters.period.conditions(PaymentLink.created_at)
        if filters.active is not None:
            kept.append(PaymentLink.active == filters.active)
        return await lookups.newest_of_yours(
            session, caller, PaymentLink, PaymentLink.id, page, *kept
        )

    async def deactivate(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, reference: str
    ) -> PaymentLink:
        """No visit opens a session any more; sessions already open stay payable."""
        found = await self.get(session, caller, reference)
        link = await lookups.locked(session, PaymentLink, PaymentLink.id == found.id)
        assert link is not None  # read just above; links are never deleted
        if link.active:
            link.active = False
            link.updated_at = runtime.clock.now()
        return link

    # The customer's side (cauri.web.payment_links).

    async def find(self, session: AsyncSession, code: str) -> PaymentLink:
        found = await session.scalar(select(PaymentLink).where(PaymentLink.code == code))
        if found is None:
            raise NotFound("Ce lien de paiement n'existe pas.")
        return found

    async def visit(
        self,
        session: AsyncSession,
        runtime: Runtime,
        code: str,
        typed_amount: str | None,
        base_url: str | None,
    ) -> CheckoutSession:
        """The customer goes on from the link's page: a session of its own, for the link's
        amount or the one typed (within the link's bounds). Conflict when the link takes no
        payment any more; InvalidRequest on `amount`."""
        link = await self.find(session, code)
        if not takes_payments(link, runtime):
            raise Conflict(CLOSED_LINK)
        amount = link.amount if link.amount is not None else _typed(typed_amount, link)
        return await checkout_sessions.open_for_link(session, runtime, link, amount, base_url)


def _typed(raw: str | None, link: PaymentLink) -> int:
    """An amount as a customer types it, within the link's bounds."""
    amount = typed_amount(raw, link.currency)
    if link.min_amount is not None and amount < link.min_amount:
        raise InvalidRequest.field(
            "amount",
            f"Le montant doit être d'au moins {format_major(link.min_amount, link.currency)}.",
        )
    if link.max_amount is not None and amount > link.max_amount:
        raise InvalidRequest.field(
            "amount",
            f"Le montant ne peut dépasser {format_major(link.max_amount, link.currency)}.",
        )
    return amount


payment_links = PaymentLinkService()
