"""Checkout sessions (issue 25): the merchant opens one, the customer pays on its page.

Each payment tried from the page is an attempt: a payment like any other (the same rules,
route, connector and events), naming its session. The session completes with the first
attempt that succeeds, at most once, under the session's row lock; the customer may leave a
pending attempt ("essayer autrement") and try another mode, and an attempt that succeeds
once its session is no longer open (completed by another attempt, expired, expired by the
merchant) is refunded in full from the merchant's balance, as a plan refunds a late
instalment. At most MAX_ATTEMPTS payments per session: a page cannot be used to flood
numbers with payment requests.

Lock order: a payment, then its session (a settlement); a new attempt locks its session and
inserts its payment, which no one else can lock yet. So two attempts that succeed at once
serialize on the session: one completes it, the other is refunded.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import structlog
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.calls import availability
from cauri.calls.availability import Route, State
from cauri.calls.requests import Action
from cauri.checkout import jobs
from cauri.checkout.schemas import CheckoutSessionCreate, SessionFilters, session_object
from cauri.events import service as events
from cauri.kit import phone
from cauri.kit.errors import CauriError, Conflict, InvalidRequest, NotFound, ServerError
from cauri.kit.ids import prefixed
from cauri.kit.money import Currency, to_major, to_minor
from cauri.kit.pagination import Page
from cauri.kit.validation_messages import validation_error
from cauri.merchants.caller import Caller
from cauri.merchants.contract import FeeBearer, open_modes, payment_terms
from cauri.models import CheckoutSession, InstallmentPlan, Payment, PaymentLink, lookups
from cauri.models.checkout import SessionStatus
from cauri.operators import catalogue
from cauri.operators.catalogue import PaymentMode
from cauri.operators.protocol import Outcome
from cauri.payments import rules
from cauri.payments.schemas import PaymentFields
from cauri.payments.service import Origin, payments
from cauri.plans import settlement as plan_settlement
from cauri.plans.service import plans
from cauri.refunds.schemas import RefundCreate
from cauri.refunds.service import refunds
from cauri.runtime import Runtime
from cauri.webhooks import url_safety

log = structlog.get_logger("cauri.checkout")

MAX_ATTEMPTS = 5
NO_PUBLIC_URL = (
    "CAURI_PUBLIC_URL n'est pas défini : sans lui, le service ne sait pas à quelle adresse "
    "publique envoyer le client payer."
)
# Operators that take the customer to a page of their own live (Wave's checkout, Orange Money's
# web payment; docs/OPERATORS.md): in test mode, Cauri's test page plays that page, so that
# every kind of mode can be tried without an operator.
OWN_PAGE = frozenset({"wave_sn", "wave_ci", "orange_ci", "orange_ml"})
CLOSED_LINK = "Ce lien de paiement n'est plus actif. Contactez le marchand."
# How long a link's visit's session stays open: a customer paying now, not a bill kept.
VISIT_SESSION_SECONDS = 3600
TOO_MANY_ATTEMPTS = (
    "Trop de tentatives de paiement pour cette commande. Contactez le marchand pour payer "
    "autrement."
)


@dataclass(frozen=True)
class AttemptForm:
    """What the customer's form posts (its field names are a contract: issue 25)."""

    operator: str
    phone_number: str | None = None
    otp: str | None = None
    amount: str | None = None
    firstname: str | None = None
    lastname: str | None = None
    email: str | None = None


def _page_url(base_url: str | None, reference: str) -> str:
    if base_url is None:
        raise ServerError(NO_PUBLIC_URL)
    return f"{base_url.rstrip('/')}/checkout/{reference}"


async def _plan_to_pay(
    session: AsyncSession, runtime: Runtime, caller: Caller, body: CheckoutSessionCreate
) -> InstallmentPlan | None:
    """The caller's plan the session pays an instalment of, taking instalments now, in its
    own currency; a 422 on `plan` or `currency` otherwise."""
    if body.plan is None:
        return None
    try:
        plan = await plans.get(session, caller, body.plan)
    except NotFound:
        raise InvalidRequest.field("plan", "Plan de paiement introuvable.") from None
    if not plan_settlement.takes_instalments(plan, runtime.clock.now()):
        raise InvalidRequest.field("plan", "Ce plan n'accepte plus de versement.")
    if body.currency is not None and body.currency.value != plan.currency:
        raise InvalidRequest.field(
            "currency", f"Ce plan est en {plan.currency} : ses versements aussi."
        )
    return plan


def _check_operators(codes: list[str] | None) -> list[str] | None:
    """The allow-list in the catalogue's spelling; an unknown code is a 422."""
    if codes is None:
        return None
    spelled: list[str] = []
    for code in codes:
        mode = catalogue.find(code)
        if mode is None:
            raise InvalidRequest.field("operators", f"Opérateur inconnu : {code}.")
        if mode.operator not in spelled:
            spelled.append(mode.operator)
    return spelled


def takes_payments(link: PaymentLink, runtime: Runtime) -> bool:
    """Whether a visit of `link` may pay: active, not past its expiry, below its cap."""
    if not link.active:
        return False
    if link.expires_at is not None and runtime.clock.now() >= link.expires_at:
        return False
    return has_room(link)


def has_room(link: PaymentLink) -> bool:
    """Whether `link` is below its cap."""
    return link.max_uses is None or link.uses < link.max_uses


_TYPED_AMOUNT = re.compile(r"^[0-9]{1,15}([.,][0-9]{1,2})?$")


def typed_amount(raw: str | None, currency: str) -> int:
    """An amount as a customer types it (`5 000`, `12,50`), in minor units; a 422 on
    `amount` when it is none."""
    text = re.sub(r"[\s\u202f\u00a0]", "", raw or "")
    if not _TYPED_AMOUNT.fullmatch(text):
        raise InvalidRequest.field("amount", "Indiquez un montant, en chiffres.")
    amount = to_minor(Decimal(text.replace(",", ".")), currency)
    if amount <= 0:
        raise InvalidRequest.field("amount", "Le montant doit être positif.")
    return amount


# Annotations outside the class, where `list` is the builtin and not the method.
Tried = dict[str, list[str]]
Shown = list[dict[str, Any]]
Modes = list[PaymentMode]


_BY_REFERENCE = lookups.ByReference(
    CheckoutSession, CheckoutSession.reference, "Session de paiement introuvable."
)


class CheckoutService:
    async def create(
        self,
        session: AsyncSession,
        runtime: Runtime,
        caller: Caller,
        body: CheckoutSessionCreate,
        base_url: str | None,
    ) -> tuple[CheckoutSession, bool]:
        """The session, and whether it was opened now (False: a replay of `external_id`)."""
        rules.check_return_url(body.return_url, livemode=caller.livemode)
        if body.callback_url is not None:
            url_safety.require_safe(
                body.callback_url,
                field="callback_url",
                reach=url_safety.Reach.configured(runtime.settings),
            )
        plan = await _plan_to_pay(session, runtime, caller, body)
        currency = plan.currency if plan else (body.currency or Currency.XOF).value
        if body.amount is None and plan is None:
            raise InvalidRequest.field("amount", "Obligatoire, sauf pour un versement de plan.")
        values = {
            "merchant_id": caller.merchant_id,
            "livemode": caller.livemode,
            "external_id": body.external_id,
            "amount": None if body.amount is None else to_minor(body.amount, currency),
            "currency": currency,
            "plan_id": plan.id if plan else None,
            "description": body.description,
            "return_url": body.return_url,
            "callback_url": body.callback_url,
            "customer": body.customer.model_dump(),
            "country": body.country.upper() if body.country else None,
            "operators": _check_operators(body.operators),
            "metadata": body.metadata,
        }
        created = await self._open(session, runtime, values, base_url, body.expires_in)
        if created is None:
            return await self.get(session, caller, body.external_id or ""), False
        return created, True

    async def open_for_link(
        self,
        session: AsyncSession,
        runtime: Runtime,
        link: PaymentLink,
        amount: int,
        base_url: str | None,
    ) -> CheckoutSession:
        """A session for a visit of `link`, for `amount` (cauri.checkout.links)."""
        values = {
            "merchant_id": link.merchant_id,
            "livemode": link.livemode,
            "external_id": None,
            "amount": amount,
            "currency": link.currency,
            "description": link.description,
            "return_url": link.return_url,
            "callback_url": None,
            "customer": {},
            "country": None,
            "operators": None,
            "metadata": link.metadata_,
            "payment_link": link.reference,
        }
        opened = await self._open(session, runtime, values, base_url, VISIT_SESSION_SECONDS)
        assert opened is not None  # without an external_id, nothing can conflict
        return opened

    async def _open(
        self,
        session: AsyncSession,
        runtime: Runtime,
        values: dict[str, Any],
        base_url: str | None,
        expires_in: int,
    ) -> CheckoutSession | None:
        """Inserts an open session of `values`, with the job that expires it; None when its
        external_id is taken already."""
        reference = prefixed("cs", 16)
        now = runtime.clock.now()
        row = values | {
            "id": uuid.uuid4(),
            "reference": reference,
            "url": _page_url(base_url, reference),
            "status": SessionStatus.OPEN.value,
            "expires_at": now + timedelta(seconds=expires_in),
            "created_at": now,
            "updated_at": now,
        }
        created = await lookups.inserted_unless_replayed(session, CheckoutSession, row)
        if created is not None:
            await jobs.EXPIRE.enqueue(
                session,
                jobs.SessionJob(reference),
                livemode=created.livemode,
                now=now,
                delay=expires_in,
            )
        return created

    async def get(self, session: AsyncSession, caller: Caller, reference: str) -> CheckoutSession:
        """By reference or by the merchant's external_id, within the caller's environment."""
        return await _BY_REFERENCE.get(session, caller, reference)

    async def list(
        self, session: AsyncSession, caller: Caller, page: Page, filters: SessionFilters
    ) -> tuple[Sequence[CheckoutSession], int]:
        kept = filters.period.conditions(CheckoutSession.created_at)
        if filters.status is not None:
            kept.append(CheckoutSession.status == filters.status)
        return await lookups.newest_of_yours(
            session, caller, CheckoutSession, CheckoutSession.id, page, *kept
        )

    async def objects(self, session: AsyncSession, found: Sequence[CheckoutSession]) -> Shown:
        """The sessions as the API shows them, their attempts read in one query."""
        tried: Tried = {checkout.reference: [] for checkout in found}
        if tried:
            rows = await session.execute(
                select(Payment.checkout_session, Payment.id)
                .where(Payment.checkout_session.in_(list(tried)))
                .order_by(Payment.created_at, Payment.id)
            )
            for reference, payment_id in rows:
                tried[reference].append(str(payment_id))  # type: ignore[index]  # IN above
        return [session_object(checkout, tried[checkout.reference]) for checkout in found]

    async def expire(
        self, session: AsyncSession, runtime: Runtime, caller: Caller, reference: str
    ) -> CheckoutSession:
        """The merchant closes an open session: no attempt may start on it any more, and one
        still pending that succeeds is refunded. 409 once complete; an expired one is as it
        is."""
        found = await self.get(session, caller, reference)
        checkout = await self.lock(session, found.reference)
        assert checkout is not None  # read just above; sessions are never deleted
        if checkout.status == SessionStatus.COMPLETE:
            raise Conflict("Cette session de paiement est déjà payée : elle ne peut plus expirer.")
        if checkout.status == SessionStatus.OPEN:
            await self._close(session, runtime, checkout)
        return checkout

    async def lock(self, session: AsyncSession, reference: str) -> CheckoutSession | None:
        return await lookups.locked(
            session, CheckoutSession, CheckoutSession.reference == reference
        )

    async def _close(
        self, session: AsyncSession, runtime: Runtime, checkout: CheckoutSession
    ) -> None:
        now = runtime.clock.now()
        checkout.status = SessionStatus.EXPIRED.value
        checkout.updated_at = now
        await self._announce(session, checkout, "checkout_session.expired")

    async def _announce(self, session: AsyncSession, checkout: CheckoutSession, type: str) -> None:
        await session.flush()
        (shown,) = await self.objects(session, [checkout])
        await events.emit(
            session,
            merchant_id=checkout.merchant_id,
            livemode=checkout.livemode,
            type=type,
            data=shown,
            at=checkout.updated_at,
            callback_url=checkout.callback_url,
        )

    # The customer's page (cauri.web.checkout): a session by its reference alone, which only
    # its page's address holds.

    async def find(self, session: AsyncSession, reference: str) -> CheckoutSession:
        found = await session.scalar(
            select(CheckoutSession).where(CheckoutSession.reference == reference)
        )
        if found is None:
            raise NotFound("Cette page de paiement n'existe pas.")
        return found

    async def attempts(self, session: AsyncSession, checkout: CheckoutSession) -> Sequence[Payment]:
        """Oldest first."""
        return await payments.oldest_first(session, Payment.checkout_session == checkout.reference)

    async def offered(
        self, session: AsyncSession, runtime: Runtime, checkout: CheckoutSession
    ) -> Modes:
        """The modes the customer may pay this session with: open to the merchant in the
        session's environment, in its currency, within its allow-list; live, never one whose
        route is closed (calls.availability: it would refuse the payment at once)."""
        allowed = set(checkout.operators) if checkout.operators else None
        candidates = [
            mode
            for mode in catalogue.CATALOGUE
            if (allowed is None or mode.operator in allowed)
            and (mode.is_card or mode.currency == checkout.currency)
        ]
        opened = await open_modes(
            session, checkout.merchant_id, checkout.livemode, candidates, runtime.operators
        )
        modes = [mode for mode, _ in opened]
        if not checkout.livemode:
            return modes  # the simulator is always up
        routes: dict[str, Route] = {}
        for mode in modes:
            routed = await runtime.operators.route(
                session, mode.operator, Action.COLLECT, livemode=True
            )
            if routed is not None:
                routes[mode.operator] = Route(routed.connector, mode.operator, Action.COLLECT.value)
        found = await availability.states(session, runtime, routes.values())
        return [
            mode
            for mode in modes
            if mode.operator in routes and found[routes[mode.operator]] is not State.CLOSED
        ]

    async def commission(
        self,
        session: AsyncSession,
        runtime: Runtime,
        checkout: CheckoutSession,
        mode: PaymentMode,
    ) -> int:
        """What the customer would pay on top of the amount with `mode`: the commission
        when the account's customers bear it, else 0 (shown before they pay)."""
        if checkout.amount is None:
            return 0  # the customer types it: shown with the payment
        terms = await payment_terms(
            session, checkout.merchant_id, checkout.livemode, mode, runtime.operators
        )
        # An instalment's customer always bears it (PaymentService.price).
        if checkout.plan_id is None and terms.fee_bearer is not FeeBearer.CUSTOMER:
            return 0
        return terms.fee(checkout.amount, checkout.currency)

    async def attempt(
        self,
        session: AsyncSession,
        runtime: Runtime,
        reference: str,
        form: AttemptForm,
        base_url: str | None,
    ) -> Payment:
        """A payment tried from the page (a plan's instalment for a plan's session), engaged
        with its operator. A refusal at initiation raises PaymentFailed once the failed
        payment is recorded (the session's latest attempt); bad input raises InvalidRequest
        with the form's field names, nothing written. A card's or an operator's page sends
        the customer back to the session's return page."""
        found = await self.find(session, reference)
        checkout = await self.lock(session, found.reference)
        assert checkout is not None  # found just above; sessions are never deleted
        self._check_open(checkout, runtime)
        tried = await session.scalar(
            select(func.count()).where(Payment.checkout_session == checkout.reference)
        )
        if (tried or 0) >= MAX_ATTEMPTS:
            raise Conflict(TOO_MANY_ATTEMPTS)
        # A link deactivated or past its expiry since the visit still lets its open sessions
        # be paid (as Stripe's does); its cap, never.
        if checkout.payment_link is not None and not has_room(
            await self._link(session, checkout.payment_link)
        ):
            raise Conflict(CLOSED_LINK)
        mode = catalogue.find(form.operator)
        if mode is None or mode not in await self.offered(session, runtime, checkout):
            raise InvalidRequest.field("operator", "Ce moyen de paiement n'est pas proposé ici.")
        amount = checkout.amount
        if amount is None:
            amount = typed_amount(form.amount, checkout.currency)
        body = _payment_fields(
            checkout, form, mode, amount, f"{_page_url(base_url, reference)}/return"
        )
        caller = Caller(checkout.merchant_id, checkout.livemode)
        origin = Origin(checkout.reference, checkout.payment_link)
        if checkout.plan_id is not None:
            return await plans.add_instalment(
                session, runtime, caller, str(checkout.plan_id), body, base_url, origin
            )
        priced = await payments.price(session, runtime, caller, body, own_return_page=True)
        # Test mode: an operator with a page of its own is played by Cauri's test page.
        test_page = not checkout.livemode and mode.operator in OWN_PAGE
        payment = await payments.record(
            session,
            runtime,
            caller,
            body,
            priced,
            base_url,
            description=checkout.description,
            origin=origin,
            test_page=test_page,
        )
        assert payment is not None  # without an external_id, nothing can conflict
        if not test_page:  # on its test page, the tester decides, as for a card
            await payments.initiate(session, runtime, payment, otp=body.otp)
        return payment

    @staticmethod
    def _check_open(checkout: CheckoutSession, runtime: Runtime) -> None:
        if checkout.status == SessionStatus.COMPLETE:
            raise Conflict("Cette commande est déjà payée.")
        if checkout.status == SessionStatus.EXPIRED or runtime.clock.now() >= checkout.expires_at:
            raise Conflict("Cette page de paiement a expiré. Demandez un nouveau lien au marchand.")

    # What the worker and the payments domain hand over.

    async def attempt_settled(
        self, session: AsyncSession, runtime: Runtime, payment: Payment, outcome: Outcome
    ) -> None:
        """An attempt reached its final state (its payment locked by the caller): the first
        success completes the session; a success once it is no longer open is refunded."""
        if outcome is not Outcome.SUCCEEDED:
            return
        assert payment.checkout_session is not None
        checkout = await self.lock(session, payment.checkout_session)
        assert checkout is not None  # the foreign key guarantees it
        now = runtime.clock.now()
        is_open = checkout.status == SessionStatus.OPEN
        if is_open and await self._link_counts(session, checkout, now):
            checkout.status = SessionStatus.COMPLETE.value
            checkout.payment_id = payment.id
            checkout.completed_at = now
            checkout.updated_at = now
            await self._announce(session, checkout, "checkout_session.completed")
            return
        if is_open:
            # Its link took its last payment meanwhile (two visits paying at once).
            await self._close(session, runtime, checkout)
        if payment.plan_id is not None:
            # An instalment counts toward its plan whatever became of the session it was
            # paid from (plans: a plan refunds only by its cancellation).
            log.info("checkout.instalment_after_close", session=checkout.reference)
            return
        log.warning(
            "checkout.late_attempt",
            session=checkout.reference,
            payment=str(payment.id),
            status=checkout.status,
        )
        await jobs.REFUND_LATE_ATTEMPT.enqueue(
            session, jobs.AttemptJob(str(payment.id)), livemode=payment.livemode, now=now
        )

    async def _link(self, session: AsyncSession, reference: str) -> PaymentLink:
        link = await session.scalar(select(PaymentLink).where(PaymentLink.reference == reference))
        assert link is not None  # the foreign key guarantees it
        return link

    async def _link_counts(
        self, session: AsyncSession, checkout: CheckoutSession, now: datetime
    ) -> bool:
        """Whether the session's link (if any) takes this payment: counted under the link's
        lock, deactivated when it reaches its cap; False once the cap is reached."""
        if checkout.payment_link is None:
            return True
        link = await lookups.locked(
            session, PaymentLink, PaymentLink.reference == checkout.payment_link
        )
        assert link is not None  # the foreign key guarantees it
        if not has_room(link):
            return False
        link.uses += 1
        link.updated_at = now
        if link.max_uses is not None and link.uses >= link.max_uses:
            link.active = False
        return True

    async def expire_due(self, session: AsyncSession, runtime: Runtime, reference: str) -> None:
        """The expiry job: a session still open at its `expires_at` expires."""
        checkout = await self.lock(session, reference)
        if checkout is None or checkout.status != SessionStatus.OPEN:
            return
        if runtime.clock.now() < checkout.expires_at:
            return
        await self._close(session, runtime, checkout)

    async def refund_late_attempt(
        self, session: AsyncSession, runtime: Runtime, payment_id: str
    ) -> None:
        """The job of an attempt that succeeded after its session closed: its whole amount
        back to the number that paid (a refund the merchant sees, under an external_id
        that names the session, so that a rerun refunds nothing more). A card payment
        cannot be refunded by Cauri: it is logged for the staff. A refusal the refund
        recorded is kept; anything else fails the job, which is retried."""
        payment = await session.get(Payment, uuid.UUID(payment_id))
        checkout_reference = payment.checkout_session if payment else None
        if payment is None or checkout_reference is None:
            return
        mode = catalogue.find(payment.operator)
        if mode is None or mode.is_card:
            log.error("checkout.late_card_attempt", session=checkout_reference, payment=payment_id)
            return
        caller = Caller(payment.merchant_id, payment.livemode)
        request = RefundCreate(
            reason=f"Paiement reçu après la clôture de la session {checkout_reference}",
            external_id=f"{checkout_reference}:{payment.id}",
        )
        try:
            await refunds.create(session, runtime, caller, str(payment.id), request)
        except CauriError as refusal:
            if not refusal.keeps_writes:
                raise


def _payment_fields(
    checkout: CheckoutSession, form: AttemptForm, mode: PaymentMode, amount: int, return_url: str
) -> PaymentFields:
    """The payment the form asks for, checked as the API checks one; errors under the
    form's own field names."""
    customer = {
        key: value
        for key in ("firstname", "lastname", "email", "phone_number")
        if (value := getattr(form, key, None) or checkout.customer.get(key))
    }
    fields: dict[str, object] = {
        "amount": to_major(amount, checkout.currency),
        "currency": checkout.currency,
        "operator": mode.operator,
        "customer": customer,
        "callback_url": checkout.callback_url,
        "metadata": checkout.metadata_,
        "return_url": return_url,
    }
    if not mode.is_card:
        fields["phone_number"] = international_number(form.phone_number, mode.country_code)
        fields["otp"] = form.otp.strip() if form.otp and form.otp.strip() else None
    try:
        return PaymentFields.model_validate(fields)
    except ValidationError as invalid:
        raise _on_form(validation_error(invalid)) from None


# The longest national number of the seven countries (Benin's and Côte d'Ivoire's: ten
# digits); with its country code, every number is longer.
_LONGEST_NATIONAL = 10


def international_number(raw: str | None, country_code: str | None) -> str | None:
    """A number as a customer types it (`97 00 00 00`, `+229 97-00-00-00`): separators
    dropped, and the country code of `country_code` put first when the number is a national
    one (too short to hold a country code). A number with another country's code stays as
    typed, so that the operator's rule refuses it by name."""
    if raw is None or not raw.strip():
        return None
    digits = re.sub(r"[\s.\-()\u00a0]", "", raw)
    dial = phone.DIAL_CODES.get(country_code or "")
    if dial and digits.isdigit() and len(digits) <= _LONGEST_NATIONAL:
        digits = dial + digits
    return digits


def _on_form(error: InvalidRequest) -> InvalidRequest:
    """The details under the form's names (`customer.email` is the form's `email`)."""
    details = {key.removeprefix("customer."): value for key, value in (error.details or {}).items()}
    return InvalidRequest(error.message, details)


checkout_sessions = CheckoutService()
