"""Merchant accounts, their keys and their contract: what the operator CLI changes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.connectors.secrets import SecretBox
from cauri.kit import phone
from cauri.kit.errors import InvalidRequest, NotFound
from cauri.kit.ids import prefixed
from cauri.kit.money import to_minor
from cauri.merchants import keys, webhook_secrets
from cauri.merchants.contract import FeeBearer
from cauri.models import ApiKey, FeeRule, Merchant, WebhookEndpoint
from cauri.models.merchants import MERCHANT_STATUSES
from cauri.operators import catalogue
from cauri.platform.service import check_currency, fixed_column

# api_keys.id is a bigint: anything longer could not be one, and would overflow the query.
_KEY_ID = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True)
class NewMerchant:
    merchant: Merchant
    test_key: str
    live_key: str


def _check_status(status: str) -> None:
    if status not in MERCHANT_STATUSES:
        raise InvalidRequest.field("status", f"Statut inconnu : {status}.")


class MerchantService:
    async def create(
        self,
        session: AsyncSession,
        *,
        name: str,
        status: str,
        now: datetime,
        box: SecretBox | None,
    ) -> NewMerchant:
        """`box`: the keyring that seals its webhook secrets (cauri.merchants.webhook_secrets);
        None without CAURI_SECRET_KEY."""
        _check_status(status)
        if not name.strip():
            raise InvalidRequest.field("name", "Le nom du marchand est obligatoire.")
        merchant = Merchant(id=prefixed("mer", 8), name=name, status=status, created_at=now)
        session.add(merchant)
        await session.flush()
        for livemode in (False, True):
            endpoint = WebhookEndpoint(
                merchant_id=merchant.id, livemode=livemode, url=None, updated_at=now
            )
            webhook_secrets.issue(box, endpoint)
            session.add(endpoint)
        await session.flush()
        test_key = await self.create_key(session, merchant.id, livemode=False, now=now)
        live_key = await self.create_key(session, merchant.id, livemode=True, now=now)
        return NewMerchant(merchant, test_key, live_key)

    async def get(self, session: AsyncSession, merchant_id: str) -> Merchant:
        merchant = await session.get(Merchant, merchant_id)
        if merchant is None:
            raise NotFound(f"Marchand introuvable : {merchant_id}.")
        return merchant

    async def create_key(
        self,
        session: AsyncSession,
        merchant_id: str,
        *,
        livemode: bool,
        now: datetime,
        expires_at: datetime | None = None,
    ) -> str:
        """Returns the key itself: it is shown this once and stored only as a digest."""
        await self.get(session, merchant_id)
        key = keys.generate(livemode)
        session.add(
            ApiKey(
                merchant_id=merchant_id,
                livemode=livemode,
                key_hash=keys.digest(key),
                key_hint=key[-4:],
                expires_at=expires_at,
                created_at=now,
            )
        )
        await session.flush()
        return key

    async def list_keys(self, session: AsyncSession, merchant_id: str) -> Sequence[ApiKey]:
        await self.get(session, merchant_id)
        statement = select(ApiKey).where(ApiKey.merchant_id == merchant_id).order_by(ApiKey.id)
        return (await session.scalars(statement)).all()

    async def key_of(self, session: AsyncSession, key: str) -> ApiKey:
        """The row of a key just made (by its digest: the key itself is never stored)."""
        return (
            await session.scalars(select(ApiKey).where(ApiKey.key_hash == keys.digest(key)))
        ).one()

    async def revoke_key(self, session: AsyncSession, key_id: str, *, now: datetime) -> ApiKey:
        """Refuses the key from now on; revoking it again keeps the first revocation time."""
        key = await session.get(ApiKey, int(key_id)) if _KEY_ID.fullmatch(key_id) else None
        if key is None:
            raise NotFound(f"Clé introuvable : {key_id}.")
        if key.revoked_at is None:
            key.revoked_at = now
            await session.flush()
        return key

    async def rotate_key(
        self,
        session: AsyncSession,
        merchant_id: str,
        *,
        livemode: bool,
        grace: timedelta,
        now: datetime,
    ) -> str:
        """A new key; the merchant's other usable keys of that mode expire after `grace`
        (never later than they already would)."""
        await self.get(session, merchant_id)
        deadline = now + grace
        await session.execute(
            update(ApiKey)
            .where(
                ApiKey.merchant_id == merchant_id,
                ApiKey.livemode == livemode,
                ApiKey.revoked_at.is_(None),
                or_(ApiKey.expires_at.is_(None), ApiKey.expires_at > now),
            )
            .values(expires_at=func.least(func.coalesce(ApiKey.expires_at, deadline), deadline))
        )
        return await self.create_key(session, merchant_id, livemode=livemode, now=now)

    async def set_status(self, session: AsyncSession, merchant_id: str, status: str) -> Merchant:
        _check_status(status)
        merchant = await self.get(session, merchant_id)
        merchant.status = status
        await session.flush()
        return merchant

    async def set_fee_bearer(
        self, session: AsyncSession, merchant_id: str, bearer: str
    ) -> Merchant:
        """Applies to payments created from now on; each payment keeps its own."""
        if bearer not in set(FeeBearer):
            raise InvalidRequest.field(
                "fee_bearer", f"Valeur inconnue : {bearer} (customer ou merchant)."
            )
        merchant = await self.get(session, merchant_id)
        merchant.fee_bearer = bearer
        await session.flush()
        return merchant

    async def set_fee(
        self,
        session: AsyncSession,
        merchant_id: str,
        *,
        mode: str,
        percent: Decimal | None,
        fixed: Decimal | int | None,
        disabled: bool,
        currency: str = "XOF",
    ) -> FeeRule:
        """Sets the account's whole rule for a mode (DESIGN: fixed fees): an omitted percent
        or fixed amount is 0, not the platform's default. `fixed` is in major units of
        `currency` (XOF, which XAF shares; EUR or USD); the rule's fixed amounts in the other
        currencies are kept, each being set by its own call."""
        await self.get(session, merchant_id)
        mode = mode.strip().lower()
        if mode != "payout" and catalogue.find(mode) is None:
            raise InvalidRequest.field("operator", f"Opérateur inconnu : {mode}.")
        check_currency(currency)
        if (percent is not None and percent < 0) or (fixed is not None and fixed < 0):
            raise InvalidRequest("Un frais ne peut pas être négatif.")
        if percent is not None and percent > 100:
            raise InvalidRequest.field("percent", "Un pourcentage ne dépasse pas 100.")
        values = {
            "percent": percent or Decimal(0),
            fixed_column("fixed", currency): to_minor(fixed or 0, currency, "fixed"),
            "disabled": disabled,
        }
        statement = (
            insert(FeeRule)
            .values({"merchant_id": merchant_id, "mode": mode, "fixed": 0} | values)
            .on_conflict_do_update(index_elements=[FeeRule.merchant_id, FeeRule.mode], set_=values)
            .returning(FeeRule)
        )
        return (await session.scalars(statement)).one()

    async def set_limits(
        self,
        session: AsyncSession,
        merchant_id: str,
        *,
        per_payout: int | None,
        daily: int | None,
        approval_threshold: int | None,
    ) -> Merchant:
        merchant = await self.get(session, merchant_id)
        if per_payout is not None:
            merchant.limit_per_payout = per_payout
        if daily is not None:
            merchant.limit_daily = daily
        if approval_threshold is not None:
            merchant.approval_threshold = approval_threshold
        await session.flush()
        return merchant

    async def set_payout_account(
        self,
        session: AsyncSession,
        merchant_id: str,
        *,
        phone_number: str,
        operator: str,
        validated: bool,
    ) -> Merchant:
        mode = catalogue.find(operator)
        if mode is None or mode.is_card:
            raise InvalidRequest.field("operator", f"Opérateur Mobile Money inconnu : {operator}.")
        merchant = await self.get(session, merchant_id)
        merchant.payout_phone = phone.normalize(phone_number, mode.country_code)
        merchant.payout_operator = mode.operator
        merchant.payout_validated = validated
        # The staff's decision answers the account the team asked for, if any.
        merchant.payout_request_phone = merchant.payout_request_operator = None
        merchant.payout_requested_at = merchant.payout_requested_by = None
        await session.flush()
        return merchant


merchants = MerchantService()
