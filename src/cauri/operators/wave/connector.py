"""Wave's Checkout and Payout APIs, through the adapter protocol.

A collection is a checkout session: the payment's `payment_url` is Wave's launch URL, where
the customer approves; the session's `client_reference` is our reference, by which Cauri
finds it again. A payout is sent with `Idempotency-Key` = our reference (a re-send is the
same payout). A refund of a Wave payment refunds its checkout session. Wave signs its
webhooks (`Wave-Signature`): a verified event settles its payment. Sources in
docs/OPERATORS.md, "Wave".
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Mapping
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlencode

from cauri.kit.money import decimal_text
from cauri.operators import balances, exchange
from cauri.operators.config import ConnectorConfig
from cauri.operators.protocol import (
    CallbackUpdate,
    CheckReport,
    Collection,
    Disbursement,
    Exchange,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
    StatementUnavailable,
)
from cauri.operators.wave import answers, signature

# Wave's limit on a payout's `payment_reason` (its Payout API reference).
REASON_LENGTH = 40
# The webhook events about a checkout session; others (payments received outside a
# session, …) are not about our requests.
SESSION_EVENTS = frozenset({"checkout.session.completed", "checkout.session.payment_failed"})


# Why a refund that is not of the session's whole amount is refused before it is sent.
NOT_WHOLE = "partial_refund_not_offered"


def _refunds_exactly(session: dict[str, Any], disbursement: Disbursement) -> bool:
    """Whether refunding the session gives back exactly `disbursement`'s amount and currency
    (a session is refunded whole: what the customer paid, Wave's own fee included)."""
    try:
        amount = Decimal(str(session.get("amount")))
    except InvalidOperation:
        return False
    return session.get("currency") == disbursement.currency and amount == Decimal(
        decimal_text(disbursement.amount, disbursement.currency)
    )


def mobile(phone_number: str) -> str:
    """Wave's numbers are E.164, with the `+`."""
    return "+" + phone_number.lstrip("+")


class WaveConnector(exchange.NetworkConnector):
    # A checkout session is refunded whole, once (POST /v1/checkout/sessions/{id}/refund).
    refunds = RefundSupport.WHOLE
    # Its wallet's transactions, read as cauri.reconciliation.formats.wave reads them.
    format = "wave"

    def __init__(self, config: ConnectorConfig) -> None:
        super().__init__(config)
        self._base = config.base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {config.secrets['api_key']}"}
        self._webhook_secret = config.secrets["webhook_secret"]
        self._return_url = config.settings["return_url"]

    # The operations of the adapter protocol.

    async def collect(self, collection: Collection) -> OperatorResult:
        back = collection.return_url or self._return_url
        body: dict[str, Any] = {
            "amount": decimal_text(collection.amount, collection.currency),
            "currency": collection.currency,
            "client_reference": collection.reference,
            "success_url": back,
            "error_url": back,
        }
        if collection.phone_number:
            # Only this wallet may pay the session: the number the merchant gave.
            body["restrict_payer_mobile"] = mobile(collection.phone_number)
        answer = await self._send(
            "checkout_session", "POST", "/v1/checkout/sessions", body, collection.reference
        )
        fields = exchange.parsed(answer.text)
        if answer.status == 200 and isinstance(fields, dict):
            return answers.to_session(fields, (answer.exchange,))
        if answers.is_refusal(answer.status):
            return answers.refused(answer.status, fields, (answer.exchange,))
        return exchange.unknown((answer.exchange,))

    async def collection_status(self, collection: Collection) -> OperatorResult:
        session, records = await self._session_of(collection.reference)
        if session is None:
            return exchange.unknown(records)
        if session == {}:
            return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=records)
        return answers.to_session(session, records)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        body: dict[str, Any] = {
            "currency": disbursement.currency,
            "receive_amount": decimal_text(disbursement.amount, disbursement.currency),
            "mobile": mobile(disbursement.phone_number),
            "client_reference": disbursement.reference,
        }
        if disbursement.reason:
            body["payment_reason"] = disbursement.reason[:REASON_LENGTH]
        answer = await self._send("payout", "POST", "/v1/payout", body, disbursement.reference)
        fields = exchange.parsed(answer.text)
        if answer.status == 200 and isinstance(fields, dict):
            return answers.to_payout(fields, (answer.exchange,))
        if answers.is_refusal(answer.status):
            return answers.refused(answer.status, fields, (answer.exchange,))
        return exchange.unknown((answer.exchange,))

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        query = urlencode({"client_reference": disbursement.reference})
        answer = await self._send("payout_status", "GET", f"/v1/payouts/search?{query}")
        results = answers.found(answer.status, exchange.parsed(answer.text))
        if results is None:
            return exchange.unknown((answer.exchange,))
        if not results:
            return OperatorResult(
                Outcome.PENDING, unknown_reference=True, exchanges=(answer.exchange,)
            )
        return answers.to_payout(results[-1], (answer.exchange,))

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        """Refunds the checkout session that collected the payment (Wave refunds a session
        whole, once). Money owed without a session to refund (a plan's cancellation
        refund) is a payout."""
        if disbursement.refund_of is None:
            return await self.disburse(disbursement)
        session, records = await self._session_of(disbursement.refund_of)
        if not session:
            # Not found (the payment was not collected by this account) or not known now.
            return (
                exchange.unknown(records)
                if session is None
                else OperatorResult(Outcome.FAILED, reason="session_not_found", exchanges=records)
            )
        if not _refunds_exactly(session, disbursement):
            # Wave gives back the session's whole amount: a refund of any other amount would
            # send back what the ledger does not take out. Nothing is sent.
            return OperatorResult(Outcome.FAILED, reason=NOT_WHOLE, exchanges=records)
        answer = await self._send(
            "checkout_refund", "POST", f"/v1/checkout/sessions/{session['id']}/refund"
        )
        records = (*records, answer.exchange)
        if answer.status == 200:
            return OperatorResult(
                Outcome.SUCCEEDED, operator_reference=str(session["id"]), exchanges=records
            )
        if answers.is_refusal(answer.status):
            return answers.refused(answer.status, exchange.parsed(answer.text), records)
        return exchange.unknown(records)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        if disbursement.refund_of is None:
            return await self.disbursement_status(disbursement)
        session, records = await self._session_of(disbursement.refund_of)
        if session is None:
            return exchange.unknown(records)
        if session.get("payment_status") == "refunded":
            return OperatorResult(
                Outcome.SUCCEEDED, operator_reference=str(session["id"]), exchanges=records
            )
        # Not refunded: the refund never reached Wave, and may be sent again (a session is
        # refunded once at most).
        return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=records)

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """A checkout session event, when its `Wave-Signature` verifies (or, for a webhook
        set to Wave's shared-secret authentication, when it bears the secret)."""
        if not signature.authentic(notice.headers, notice.body, self._webhook_secret, time.time()):
            return None
        event = exchange.parsed(notice.body.decode("utf-8", "replace"))
        if not isinstance(event, dict):
            return None
        session = event.get("data")
        if (
            event.get("type") not in SESSION_EVENTS
            or not isinstance(session, dict)
            or not isinstance(session.get("client_reference"), str)
        ):
            # Wave's other events (payments received outside a session, B2B, the portal's
            # test event): authentic, not about our requests; acknowledged, or Wave would
            # send them again for days.
            return CallbackUpdate(None, exchange.unknown(()))
        return CallbackUpdate(session["client_reference"], answers.to_session(session, ()))

    async def check(self) -> CheckReport:
        """Without moving money: the key is accepted, and may use the Checkout and Payout
        APIs (searches for a reference that does not exist), and the balance when allowed."""
        facts: dict[str, Any] = {}
        probe = urlencode({"client_reference": "cauri-connectors-check"})
        for api, path in (
            ("checkout", f"/v1/checkout/sessions/search?{probe}"),
            ("payout", f"/v1/payouts/search?{probe}"),
        ):
            answer = await self._send(f"{api}_check", "GET", path)
            code = answers.error_code(exchange.parsed(answer.text)) or ""
            if answer.status is None:
                return CheckReport(
                    ok=False,
                    detail=f"no answer from {answer.exchange.url} ({answer.exchange.error})",
                    facts=facts,
                )
            if answer.status == 401:
                return CheckReport(
                    ok=False, detail=f"Wave refused the api_key ({code or 'HTTP 401'})", facts=facts
                )
            if answer.status == 403:
                return CheckReport(
                    ok=False,
                    detail=f"the api_key may not use Wave's {api} API ({code or 'HTTP 403'}): "
                    "allow it in the Wave Business Portal",
                    facts=facts,
                )
            if answer.status != 200:
                return CheckReport(
                    ok=False, detail=f"{api}: Wave answered {answer.status} {code}", facts=facts
                )
            facts[api] = "allowed"
        balance = await self._send("balance", "GET", "/v1/balance")
        fields = exchange.parsed(balance.text)
        if balance.status == 200 and isinstance(fields, dict):
            facts["balance"] = f"{fields.get('amount')} {fields.get('currency')}"
        else:
            facts["balance"] = f"not readable with this key (HTTP {balance.status})"
        return CheckReport(
            ok=True,
            detail=f"authenticated ({self.config.environment}): checkout and payout allowed",
            facts=facts,
        )

    # Reconciliation: the Balance & Reconciliation API.

    async def statement(self, day: date) -> AsyncIterator[str]:
        """`GET /v1/transactions?date=…`, page after page (`after` = the last page's
        `end_cursor`) until `has_next_page` is false: one page a line (JSON Lines)."""
        after = None
        while True:
            query = urlencode({"date": day.isoformat()} | ({"after": after} if after else {}))
            answer = await self._send("transactions", "GET", f"/v1/transactions?{query}")
            page = exchange.parsed(answer.text)
            if answer.status != 200 or not isinstance(page, dict) or "items" not in page:
                code = answers.error_code(page) or answer.exchange.error or ""
                raise StatementUnavailable(
                    f"Wave's transactions of {day}: HTTP {answer.status} {code}".strip()
                )
            yield json.dumps(page) + "\n"
            info = page.get("page_info") or {}
            if not info.get("has_next_page"):
                return
            cursor = str(info.get("end_cursor") or "")
            if not cursor or cursor == after:
                # Another page announced with no way to it: never the first page again.
                raise StatementUnavailable(f"Wave's transactions of {day}: no next cursor")
            after = cursor

    async def balances(self) -> Mapping[str, int]:
        """`GET /v1/balance`: the wallet's one balance, `{amount, currency}` (a key allowed
        the Balance API)."""
        answer = await self._send("balance", "GET", "/v1/balance")
        body = balances.parsed(answer.text)
        if answer.status != 200 or not isinstance(body, dict):
            code = answers.error_code(body) or answer.exchange.error or ""
            raise StatementUnavailable(f"Wave's balance: HTTP {answer.status} {code}".strip())
        currency, minor = balances.minor_units(body.get("amount"), body.get("currency"), "Wave")
        return {currency: minor}

    # The exchanges.

    async def _send(
        self,
        action: str,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> exchange.Answer:
        headers = dict(self._headers)
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        return await exchange.send(
            self.client, action, method, self._base + path, headers=headers, json_body=body
        )

    async def _session_of(
        self, reference: str
    ) -> tuple[dict[str, Any] | None, tuple[Exchange, ...]]:
        """The checkout session created under our reference: {} when Wave has none, None when
        Wave did not say. A paid one first, should the customer have had several."""
        query = urlencode({"client_reference": reference})
        answer = await self._send("checkout_status", "GET", f"/v1/checkout/sessions/search?{query}")
        results = answers.found(answer.status, exchange.parsed(answer.text))
        if results is None:
            return None, (answer.exchange,)
        if not results:
            return {}, (answer.exchange,)
        paid = [s for s in results if s.get("payment_status") in ("succeeded", "refunded")]
        return (paid or results)[-1], (answer.exchange,)
