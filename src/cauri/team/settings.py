"""What a merchant's owners set themselves on the dashboard: the business name and support
email its customers see, its logo, and a payout account asked for (the staff validate it:
until then payouts go to the account validated before, if any). Each change audited.

A logo is PNG or JPEG only (never SVG, which can carry scripts), at most `LOGO_BYTES`; it is
decoded and re-encoded as a PNG of at most `LOGO_SIDE` pixels a side, so that what the
checkout pages serve is an image Cauri wrote, without the file's metadata."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from PIL import Image, UnidentifiedImageError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.audit.actor import Actor
from cauri.audit.log import audited
from cauri.kit import phone
from cauri.kit.errors import InvalidRequest
from cauri.models import Merchant
from cauri.operators import catalogue
from cauri.people import accounts
from cauri.runtime import Runtime

SET_PROFILE = "merchant.profile"
SET_LOGO = "merchant.logo"
ASK_PAYOUT_ACCOUNT = "merchant.payout_account_request"
# Under the body limit of every request (cauri.kit.body_limit), with room for the form.
LOGO_BYTES = 200_000
LOGO_SIDE = 512
LOGO_MAX_SIDE_SENT = 4096
_FORMATS = {"PNG", "JPEG"}
_NAME_MAX = 120


def _profile(merchant: Merchant) -> dict[str, Any]:
    return {
        "name": merchant.name,
        "support_email": merchant.support_email,
        "logo_updated_at": merchant.logo_updated_at,
        "payout_request_phone": merchant.payout_request_phone,
        "payout_request_operator": merchant.payout_request_operator,
    }


async def _changed(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    action: str,
    change: Any,
) -> Merchant:
    # FOR NO KEY UPDATE: the merchant's payments and payouts, which only reference the row,
    # go on meanwhile.
    merchant = await session.get(Merchant, merchant_id, with_for_update={"key_share": True})
    assert merchant is not None  # the member's own merchant

    async def state() -> dict[str, Any]:
        return _profile(merchant)

    async def apply() -> Merchant:
        change(merchant)
        return merchant

    resource = ("merchant", merchant_id)
    return await audited(session, actor, action, resource, state, apply, at=runtime.clock.now())


def _checked_name(name: str) -> str:
    if not name or len(name) > _NAME_MAX:
        raise InvalidRequest.field("name", f"Le nom tient en 1 à {_NAME_MAX} caractères.")
    return name


def _checked_email(email: str | None) -> str | None:
    """The address as accounts keep theirs (cauri.people.accounts), refused on its field."""
    if email is None:
        return None
    try:
        return accounts.normalized_email(email)
    except InvalidRequest:
        raise InvalidRequest.field("support_email", "Adresse e-mail invalide.") from None


async def set_profile(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    name: str,
    support_email: str | None,
) -> Merchant:
    """The business name and the support email (None: none) its customers see."""
    checked_name, email = _checked_name(name), _checked_email(support_email)

    def change(merchant: Merchant) -> None:
        merchant.name, merchant.support_email = checked_name, email

    return await _changed(session, runtime, actor, merchant_id, SET_PROFILE, change)


def reencoded(data: bytes) -> bytes:
    """The image as a PNG Cauri writes; refused unless it is a PNG or a JPEG."""
    if len(data) > LOGO_BYTES:
        raise InvalidRequest.field("logo", "Le logo pèse au plus 200 Ko.")
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format not in _FORMATS:
                raise InvalidRequest.field("logo", "Le logo est une image PNG ou JPEG.")
            # Read from the header, before a pixel is decoded: a small file may declare a
            # huge image (a gigabyte once decoded).
            if max(image.size) > LOGO_MAX_SIDE_SENT:
                raise InvalidRequest.field(
                    "logo", f"Le logo mesure au plus {LOGO_MAX_SIDE_SENT} pixels de côté."
                )
            image.load()
            picture = image.convert("RGBA")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise InvalidRequest.field("logo", "Le logo est une image PNG ou JPEG.") from None
    picture.thumbnail((LOGO_SIDE, LOGO_SIDE))
    written = io.BytesIO()
    picture.save(written, format="PNG", optimize=True)
    return written.getvalue()


async def set_logo(
    session: AsyncSession, runtime: Runtime, actor: Actor, merchant_id: str, data: bytes | None
) -> Merchant:
    """The logo (None: removed)."""
    # Decoding is CPU work: off the event loop, as password hashing is.
    logo = None if data is None else await asyncio.to_thread(reencoded, data)
    now = runtime.clock.now()

    def change(merchant: Merchant) -> None:
        merchant.logo, merchant.logo_updated_at = logo, (None if logo is None else now)

    return await _changed(session, runtime, actor, merchant_id, SET_LOGO, change)


async def logo(session: AsyncSession, merchant_id: str) -> bytes | None:
    return await session.scalar(select(Merchant.logo).where(Merchant.id == merchant_id))


async def ask_payout_account(
    session: AsyncSession,
    runtime: Runtime,
    actor: Actor,
    merchant_id: str,
    *,
    phone_number: str,
    operator: str,
) -> Merchant:
    """A payout account for the staff to validate (the CLI's or the console's
    `set-payout-account`, which ends the request)."""
    mode = catalogue.find(operator)
    if mode is None or mode.is_card or mode.country_code is None:
        raise InvalidRequest.field("operator", f"Opérateur Mobile Money inconnu : {operator}.")
    number = phone.normalize(phone_number, mode.country_code)
    now = runtime.clock.now()

    def change(merchant: Merchant) -> None:
        merchant.payout_request_phone, merchant.payout_request_operator = number, mode.operator
        merchant.payout_requested_at, merchant.payout_requested_by = now, actor.name

    return await _changed(session, runtime, actor, merchant_id, ASK_PAYOUT_ACCOUNT, change)
