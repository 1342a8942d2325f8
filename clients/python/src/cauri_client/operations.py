"""Every operation of the API, by resource: `cauri.payments.create(…)`, `cauri.payouts.list()`…

Each is declared once and serves both clients (`cauri_client._operation`). Optional
arguments left at None are not sent. Lists are iterators over every item, newest first,
fetched `per_page` at a time as the iteration goes; `start` is the page to begin at. `from_`
and `to` take a date, a datetime or an ISO 8601 string (a date alone includes its day).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any, Literal

from cauri_client._calls import Call, Listing, every, given, listing, one, path
from cauri_client._operation import Namespace, Transport, operation
from cauri_client._operation import listing as pages
from cauri_client.resources import (
    Balance,
    BalanceTransaction,
    CheckoutSession,
    Event,
    FeedPage,
    InstallmentPlan,
    ModePrediction,
    Payment,
    PaymentLink,
    PaymentMode,
    Payout,
    PayoutBatch,
    Refund,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookTest,
)

Day = date | str
Customer = Mapping[str, str | None]


class Payments(Namespace[Transport]):
    @operation
    def create(
        *,
        amount: float,
        operator: str,
        phone_number: str | None = None,
        currency: str | None = None,
        otp: str | None = None,
        customer: Customer | None = None,
        return_url: str | None = None,
        callback_url: str | None = None,
        description: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
    ) -> Call[Payment]:
        """Collects a payment. Mobile Money: `phone_number`, and `otp` where the operator
        requires one. Card (`VISA`, `MASTERCARD`): `customer` with firstname, lastname and
        email; send the customer to the answer's `payment_url`. With an `external_id` the
        call may be replayed safely (the first payment is returned) and is retried on
        incidents; without one, it never is."""
        return Call(
            "POST",
            "/payments",
            one(Payment),
            body=given(
                amount=amount,
                operator=operator,
                phone_number=phone_number,
                currency=currency,
                otp=otp,
                customer=customer,
                return_url=return_url,
                callback_url=callback_url,
                description=description,
                metadata=metadata,
                external_id=external_id,
            ),
        )

    @operation
    def get(reference: str) -> Call[Payment]:
        """A payment by its reference or by your external_id."""
        return Call("GET", path("/payments/{}", reference), one(Payment))

    @pages
    def list(
        *,
        status: str | None = None,
        operator: str | None = None,
        external_id: str | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[Payment]:
        """Payments, newest first."""
        return listing(
            Payment,
            "/payments",
            per_page,
            start,
            status=status,
            operator=operator,
            external_id=external_id,
            from_=from_,
            to=to,
        )


class Refunds(Namespace[Transport]):
    @operation
    def create(
        payment: str,
        *,
        amount: float | None = None,
        reason: str | None = None,
        external_id: str | None = None,
    ) -> Call[Refund]:
        """Refunds a succeeded payment, in full or `amount` of it."""
        body = given(amount=amount, reason=reason, external_id=external_id)
        return Call("POST", path("/payments/{}/refund", payment), one(Refund), body=body)

    @operation
    def get(reference: str) -> Call[Refund]:
        return Call("GET", path("/refunds/{}", reference), one(Refund))

    @pages
    def list(
        *,
        payment: str | None = None,
        status: str | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[Refund]:
        """Refunds, newest first; `payment`: those of one payment."""
        return listing(
            Refund,
            "/refunds",
            per_page,
            start,
            payment=payment,
            status=status,
            from_=from_,
            to=to,
        )


class Payouts(Namespace[Transport]):
    @operation
    def create(
        *,
        amount: float,
        phone_number: str | None = None,
        operator: str | None = None,
        currency: str | None = None,
        beneficiary_name: str | None = None,
        reason: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
    ) -> Call[Payout]:
        """Sends `amount` from the balance (fees on top). Without `phone_number`, to the
        account's own validated payout account; with it (and `operator`), to a third party.
        Give an `external_id`: without one, two calls send the money twice, and the call is
        never retried."""
        body = given(
            amount=amount,
            phone_number=phone_number,
            operator=operator,
            currency=currency,
            beneficiary_name=beneficiary_name,
            reason=reason,
            metadata=metadata,
            external_id=external_id,
        )
        return Call("POST", "/payouts", one(Payout), body=body)

    @operation
    def get(reference: str) -> Call[Payout]:
        """A payout by its reference (`pyo_…`) or by your external_id."""
        return Call("GET", path("/payouts/{}", reference), one(Payout))

    @pages
    def list(
        *,
        status: str | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[Payout]:
        return listing(Payout, "/payouts", per_page, start, status=status, from_=from_, to=to)


class PayoutBatches(Namespace[Transport]):
    @operation
    def create(*, external_id: str, items: list[Mapping[str, Any]]) -> Call[PayoutBatch]:
        """Up to 1,000 payouts at once, each the body of `payouts.create` with an
        `external_id` of its own; the batch's `external_id` makes the call safe to retry (a
        replay answers the same batch). Items are checked one by one: a refused one carries
        its `error`, the others go on; the payouts are made in order, after the answer."""
        body = {"external_id": external_id, "items": items}
        return Call("POST", "/payout-batches", one(PayoutBatch), body=body)

    @operation
    def get(reference: str) -> Call[PayoutBatch]:
        """A batch with its items, by its reference (`pyb_…`) or your external_id."""
        return Call("GET", path("/payout-batches/{}", reference), one(PayoutBatch))

    @pages
    def list(
        *, status: str | None = None, per_page: int = 25, start: int = 1
    ) -> Listing[PayoutBatch]:
        return listing(PayoutBatch, "/payout-batches", per_page, start, status=status)


class InstallmentPlans(Namespace[Transport]):
    @operation
    def create(
        *,
        target_amount: float,
        currency: str | None = None,
        description: str | None = None,
        external_id: str | None = None,
    ) -> Call[InstallmentPlan]:
        """A plan the customer pays in instalments, the creation fee on top of the first."""
        body = given(
            target_amount=target_amount,
            currency=currency,
            description=description,
            external_id=external_id,
        )
        return Call("POST", "/installment-plans", one(InstallmentPlan), body=body)

    @operation
    def get(reference: str) -> Call[InstallmentPlan]:
        """A plan with its `payments`, by its reference or your external_id."""
        return Call("GET", path("/installment-plans/{}", reference), one(InstallmentPlan))

    @pages
    def list(
        *, status: str | None = None, per_page: int = 25, start: int = 1
    ) -> Listing[InstallmentPlan]:
        return listing(InstallmentPlan, "/installment-plans", per_page, start, status=status)

    @operation
    def pay(
        reference: str,
        *,
        amount: float,
        operator: str,
        phone_number: str | None = None,
        currency: str | None = None,
        otp: str | None = None,
        customer: Customer | None = None,
        return_url: str | None = None,
        callback_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Payment]:
        """Collects one instalment of the plan (a payment, as `payments.create` makes)."""
        body = given(
            amount=amount,
            operator=operator,
            phone_number=phone_number,
            currency=currency,
            otp=otp,
            customer=customer,
            return_url=return_url,
            callback_url=callback_url,
            metadata=metadata,
        )
        return Call(
            "POST", path("/installment-plans/{}/payments", reference), one(Payment), body=body
        )

    @operation
    def cancel(reference: str, *, reason: str | None = None) -> Call[InstallmentPlan]:
        """Cancels an incomplete plan: what was paid, less the penalty, goes back to the
        customer (the plan becomes `refunded` later)."""
        return Call(
            "POST",
            path("/installment-plans/{}/cancel", reference),
            one(InstallmentPlan),
            body=given(reason=reason),
        )


class PaymentModes(Namespace[Transport]):
    @operation
    def list(
        *,
        type: Literal["mobile_money", "card", "bank_transfer", "e_wallet"] | None = None,
        country: str | None = None,
    ) -> Call[list[PaymentMode]]:
        """The catalogue open to the account, with its fees (not paginated)."""
        return Call("GET", "/payment-modes", every(PaymentMode), given(type=type, country=country))

    @operation
    def predict(phone_number: str) -> Call[ModePrediction]:
        """The operator a number most likely belongs to."""
        return Call(
            "GET", "/payment-modes/predict", one(ModePrediction), {"phone_number": phone_number}
        )


class BalanceOperations(Namespace[Transport]):
    @operation
    def get() -> Call[list[Balance]]:
        """The balance in each currency of the key's environment."""
        return Call("GET", "/balance", every(Balance))

    @pages
    def transactions(
        *,
        type: str | None = None,
        currency: str | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[BalanceTransaction]:
        """The movements of the balance, newest first."""
        return listing(
            BalanceTransaction,
            "/balance/transactions",
            per_page,
            start,
            type=type,
            currency=currency,
            from_=from_,
            to=to,
        )


class Events(Namespace[Transport]):
    @operation
    def get(event_id: str) -> Call[Event]:
        return Call("GET", path("/events/{}", event_id), one(Event))

    @pages
    def list(*, type: str | None = None, per_page: int = 25, start: int = 1) -> Listing[Event]:
        """Events, newest first; `type`: one event name (`payment.succeeded`)."""
        return listing(Event, "/events", per_page, start, type=type)

    @operation
    def follow(*, cursor: str | None = None, wait: int = 0) -> Call[FeedPage]:
        """Test events in the order they committed, after `cursor` (None: from now on),
        waiting up to `wait` seconds (at most 60) for one; give the page's `cursor` back to
        read on: nothing is missed or repeated. Test keys only (`cauri-client listen`)."""
        params = given(cursor=cursor, wait=wait)
        return Call("GET", "/events/feed", FeedPage.from_envelope, params=params)


class Webhooks(Namespace[Transport]):
    @operation
    def get_endpoint() -> Call[WebhookEndpoint]:
        """The endpoint of the key's environment, and its signing secret."""
        return Call("GET", "/webhooks/endpoint", one(WebhookEndpoint))

    @operation
    def set_endpoint(url: str | None, *, rotate_secret: bool = False) -> Call[WebhookEndpoint]:
        """Sets the endpoint (None turns notifications off); `rotate_secret` makes a new
        signing secret. Keep the secret it returns to verify notifications."""
        body = {"url": url, "rotate_secret": rotate_secret}
        return Call("PUT", "/webhooks/endpoint", one(WebhookEndpoint), body=body)

    @operation
    def send_test() -> Call[WebhookTest]:
        """Sends a `webhook.test` event to the endpoint, signed like any other."""
        return Call("POST", "/webhooks/test", one(WebhookTest))

    @pages
    def deliveries(
        *, status: str | None = None, per_page: int = 25, start: int = 1
    ) -> Listing[WebhookDelivery]:
        """The delivery log, newest first."""
        return listing(WebhookDelivery, "/webhooks/deliveries", per_page, start, status=status)

    @operation
    def retry_delivery(delivery_id: str) -> Call[WebhookDelivery]:
        """Delivers a failed notification again, now."""
        return Call(
            "POST", path("/webhooks/deliveries/{}/retry", delivery_id), one(WebhookDelivery)
        )


class CheckoutSessions(Namespace[Transport]):
    @operation
    def create(
        *,
        return_url: str,
        amount: float | None = None,
        currency: str | None = None,
        plan: str | None = None,
        description: str | None = None,
        customer: Customer | None = None,
        country: str | None = None,
        operators: list[str] | None = None,
        callback_url: str | None = None,
        expires_in: int | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
    ) -> Call[CheckoutSession]:
        """A hosted payment page for `amount` (or an instalment of `plan`): send the
        customer to the answer's `url`; they come back to `return_url`."""
        body = given(
            return_url=return_url,
            amount=amount,
            currency=currency,
            plan=plan,
            description=description,
            customer=customer,
            country=country,
            operators=operators,
            callback_url=callback_url,
            expires_in=expires_in,
            metadata=metadata,
            external_id=external_id,
        )
        return Call("POST", "/checkout-sessions", one(CheckoutSession), body=body)

    @operation
    def get(reference: str) -> Call[CheckoutSession]:
        return Call("GET", path("/checkout-sessions/{}", reference), one(CheckoutSession))

    @pages
    def list(
        *,
        status: str | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[CheckoutSession]:
        return listing(
            CheckoutSession,
            "/checkout-sessions",
            per_page,
            start,
            status=status,
            from_=from_,
            to=to,
        )

    @operation
    def expire(reference: str) -> Call[CheckoutSession]:
        """Closes an open session: its page no longer takes a payment."""
        return Call("POST", path("/checkout-sessions/{}/expire", reference), one(CheckoutSession))


class PaymentLinks(Namespace[Transport]):
    @operation
    def create(
        *,
        description: str,
        amount: float | None = None,
        min_amount: float | None = None,
        max_amount: float | None = None,
        currency: str | None = None,
        reusable: bool | None = None,
        max_uses: int | None = None,
        expires_at: date | str | None = None,
        return_url: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
    ) -> Call[PaymentLink]:
        """A link to share (its `url`, or the QR code at `qr_code_url`): a fixed `amount`,
        or one the customer chooses between `min_amount` and `max_amount`."""
        body = given(
            description=description,
            amount=amount,
            min_amount=min_amount,
            max_amount=max_amount,
            currency=currency,
            reusable=reusable,
            max_uses=max_uses,
            expires_at=expires_at,
            return_url=return_url,
            metadata=metadata,
            external_id=external_id,
        )
        return Call("POST", "/payment-links", one(PaymentLink), body=body)

    @operation
    def get(reference: str) -> Call[PaymentLink]:
        return Call("GET", path("/payment-links/{}", reference), one(PaymentLink))

    @pages
    def list(
        *,
        active: bool | None = None,
        from_: Day | None = None,
        to: Day | None = None,
        per_page: int = 25,
        start: int = 1,
    ) -> Listing[PaymentLink]:
        return listing(
            PaymentLink,
            "/payment-links",
            per_page,
            start,
            active=active,
            from_=from_,
            to=to,
        )

    @operation
    def deactivate(reference: str) -> Call[PaymentLink]:
        """The link no longer opens a payment."""
        return Call("POST", path("/payment-links/{}/deactivate", reference), one(PaymentLink))


class TestHelpers(Namespace[Transport]):
    """Decide what the operator would, in test mode only (a live key is refused)."""

    __test__ = False  # not a test class, whatever its name

    @operation
    def succeed_payment(reference: str) -> Call[Payment]:
        return Call("POST", path("/test-helpers/payments/{}/succeed", reference), one(Payment))

    @operation
    def fail_payment(reference: str) -> Call[Payment]:
        return Call("POST", path("/test-helpers/payments/{}/fail", reference), one(Payment))

    @operation
    def decide_payout(reference: str, outcome: Literal["succeed", "fail"]) -> Call[Payout]:
        """Settles a pending test payout now."""
        return Call("POST", path("/test-helpers/payouts/{}/{}", reference, outcome), one(Payout))

    @operation
    def expire_plan(reference: str) -> Call[InstallmentPlan]:
        """Expires a test plan now, as its `expires_at` would."""
        return Call(
            "POST",
            path("/test-helpers/installment-plans/{}/expire", reference),
            one(InstallmentPlan),
        )
