"""Orange Money Web Payment (M Payment), through the adapter protocol: a payment is a web
payment whose hosted Orange page is the payment's `payment_url`; the customer confirms there.

An OAuth client-credentials token (cached until shortly before it expires, fetched again
once on a 401); the per-country endpoint (`country` setting: `dev` in Orange's sandbox, whose
currency is `OUV`); the documented field lengths enforced before anything is sent. Orange
notifies `notif_url` (the payment's callback URL) with the `notif_token` it gave at creation:
a notification bearing another token is refused, and one bearing it is only a hint; the
transaction status endpoint decides. Orange's Web Payment API has no refund or payout.
Sources in docs/OPERATORS.md, "Orange Money".
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urlsplit

from cauri.operators import exchange
from cauri.operators.config import ConnectorConfig
from cauri.operators.protocol import (
    NOTIFICATION_TOKEN,
    CallbackUpdate,
    CheckReport,
    Collection,
    Disbursement,
    Exchange,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
)

# Orange's documented limits (docs/research/orange_money.md).
ORDER_ID_LENGTH, URL_LENGTH, REFERENCE_LENGTH = 30, 120, 30
PAY_TOKEN = "pay_token"  # noqa: S105 (a key's name, not a secret)
FINAL = {"SUCCESS": Outcome.SUCCEEDED, "FAILED": Outcome.FAILED, "EXPIRED": Outcome.FAILED}
IN_FLIGHT = frozenset({"INITIATED", "PENDING"})
NOT_OFFERED = "orange_webpay_collects_only"


def order_id(reference: str) -> str:
    """Our reference within Orange's 30 characters: the UUID's hex digits, cut."""
    return reference.replace("-", "")[:ORDER_ID_LENGTH]


class OrangeMoneyConnector(exchange.NetworkConnector):
    refunds = RefundSupport.NONE  # the Web Payment API has no refund

    def __init__(self, config: ConnectorConfig) -> None:
        super().__init__(config)
        self._base = config.base_url.rstrip("/")
        self._country = config.settings["country"]
        self._currency = config.settings.get("currency") or (
            "OUV" if self._country == "dev" else None
        )
        self._return_url = config.settings["return_url"]
        self._merchant_key = config.secrets["merchant_key"]
        credentials = f"{config.secrets['client_id']}:{config.secrets['client_secret']}"
        self._basic = base64.b64encode(credentials.encode()).decode()
        self._token: exchange.CachedToken[exchange.Answer] = exchange.CachedToken()

    @property
    def _api(self) -> str:
        return f"{self._base}/orange-money-webpay/{self._country}/v1"

    # The operations of the adapter protocol.

    async def collect(self, collection: Collection) -> OperatorResult:
        back = collection.return_url or self._return_url
        body: dict[str, Any] = {
            "merchant_key": self._merchant_key,
            "currency": self._currency or collection.currency,
            "order_id": order_id(collection.reference),
            "amount": collection.amount,
            "return_url": back,
            "cancel_url": back,
            "notif_url": collection.callback_url,
            "lang": self.config.settings.get("lang") or "fr",
            "reference": (collection.description or "Paiement")[:REFERENCE_LENGTH],
        }
        too_long = [
            name
            for name in ("return_url", "cancel_url", "notif_url")
            if body[name] is None or len(body[name]) > URL_LENGTH
        ]
        if too_long:
            # Orange would refuse it: nothing is sent.
            return OperatorResult(Outcome.FAILED, reason=f"orange_url_refused:{too_long[0]}")
        answer, records = await self._call("webpayment", "/webpayment", body)
        fields = exchange.parsed(answer.text if answer else None)
        if answer is not None and answer.status in (200, 201) and isinstance(fields, dict):
            pay_token, page = fields.get("pay_token"), fields.get("payment_url")
            notif_token = fields.get("notif_token")
            if isinstance(pay_token, str) and isinstance(page, str):
                data = {PAY_TOKEN: pay_token}
                if isinstance(notif_token, str):
                    data[NOTIFICATION_TOKEN] = notif_token
                return OperatorResult(
                    Outcome.PENDING, redirect_url=page, operator_data=data, exchanges=records
                )
        return _refused_or_unknown(answer, records)

    async def collection_status(self, collection: Collection) -> OperatorResult:
        pay_token = (collection.operator_data or {}).get(PAY_TOKEN)
        if pay_token is None:
            # Orange's answer to the creation never reached us: no customer has the page.
            return OperatorResult(Outcome.PENDING, unknown_reference=True)
        body = {
            "order_id": order_id(collection.reference),
            "amount": collection.amount,
            "pay_token": pay_token,
        }
        answer, records = await self._call("transactionstatus", "/transactionstatus", body)
        fields = exchange.parsed(answer.text if answer else None)
        if answer is None or answer.status not in (200, 201) or not isinstance(fields, dict):
            return exchange.unknown(records)
        return to_status(fields, records)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """`{status, notif_token, txnid}` to the payment's own URL (its reference is the
        URL's last segment): a hint, bearing the payment's notif_token."""
        fields = exchange.parsed(notice.body.decode("utf-8", "replace"))
        token = fields.get("notif_token") if isinstance(fields, dict) else None
        reference = urlsplit(notice.url).path.rstrip("/").rsplit("/", 1)[-1]
        if not isinstance(token, str) or not reference:
            return None
        assert isinstance(fields, dict)
        return CallbackUpdate(reference, to_status(fields, ()), verified=False, token=token)

    async def check(self) -> CheckReport:
        """A token, then a status query for a payment that does not exist: Orange answers it
        only for an application subscribed to this country's offer."""
        self._token.forget()
        token = await self._token.get(self._fetch_token)
        if isinstance(token, exchange.Answer):
            return CheckReport(ok=False, detail=_why_no_token(token))
        probe = {"order_id": "cauri-check", "amount": 1, "pay_token": "0" * 64}
        answer, _ = await self._call("transactionstatus", "/transactionstatus", probe)
        if answer is None or answer.status is None:
            return CheckReport(ok=False, detail="no answer from Orange's web payment API")
        fields = exchange.parsed(answer.text)
        code = fields.get("code") if isinstance(fields, dict) else None
        if answer.status == 403:
            return CheckReport(
                ok=False,
                detail=f"the application is not subscribed to Orange Money Web Payment for "
                f"'{self._country}' (code {code})",
            )
        if answer.status == 401:
            return CheckReport(ok=False, detail=f"Orange refused the token (code {code})")
        return CheckReport(
            ok=True,
            detail=f"authenticated; web payment for '{self._country}' reachable",
            facts={"currency": self._currency or "the payment's"},
        )

    # The exchanges.

    async def _call(
        self, action: str, path: str, body: dict[str, Any]
    ) -> tuple[exchange.Answer | None, tuple[Exchange, ...]]:
        """POSTs with a token; a 401 gets one more try with a new one. (None, records) when
        no token could be had."""
        records: list[Exchange] = []
        answer: exchange.Answer | None = None
        for _ in range(2):
            token = await self._token.get(self._fetch_token)
            if isinstance(token, exchange.Answer):
                records.append(token.exchange)
                return token if token.status in (400, 401, 403) else None, tuple(records)
            answer = await exchange.send(
                self.client,
                action,
                "POST",
                self._api + path,
                headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
                json_body=body,
                hidden=frozenset({"merchant_key"}),
            )
            records.append(answer.exchange)
            if answer.status != 401:
                break
            self._token.forget(token)
        return answer, tuple(records)

    async def _fetch_token(self) -> exchange.Token | exchange.Answer:
        answer = await exchange.send(
            self.client,
            "token",
            "POST",
            f"{self._base}/oauth/v3/token",
            headers={"Authorization": f"Basic {self._basic}", "Accept": "application/json"},
            form={"grant_type": "client_credentials"},
            secret_answer=True,
        )
        fields = exchange.parsed(answer.text)
        try:
            value = str(fields["access_token"])
            lifetime = float(fields.get("expires_in", 3600))
        except (KeyError, TypeError, ValueError):
            return answer
        if answer.status != 200 or not value:
            return answer
        return exchange.Token(value, lifetime)


def to_status(fields: dict[str, Any], records: tuple[Exchange, ...]) -> OperatorResult:
    """A transaction status (or a notification's): SUCCESS paid, FAILED and EXPIRED failed,
    INITIATED and PENDING not yet."""
    status = str(fields.get("status", "")).upper()
    txnid = fields.get("txnid")
    reference = str(txnid) if txnid else None
    if status in FINAL:
        outcome = FINAL[status]
        reason = None if outcome is Outcome.SUCCEEDED else status.lower()
        return OperatorResult(
            outcome, operator_reference=reference, reason=reason, exchanges=records
        )
    if status in IN_FLIGHT:
        return OperatorResult(Outcome.PENDING, exchanges=records)
    return exchange.unknown(records)


def _refused_or_unknown(
    answer: exchange.Answer | None, records: tuple[Exchange, ...]
) -> OperatorResult:
    if answer is None or exchange.says_nothing(answer.status):
        return exchange.unknown(records)
    fields = exchange.parsed(answer.text)
    code = fields.get("code") or fields.get("error") if isinstance(fields, dict) else None
    reason = f"orange_{code}" if code is not None else f"http_{answer.status}"
    if answer.status in (401, 403):
        reason = f"operator_refused_credentials:{reason}"
    return OperatorResult(Outcome.FAILED, reason=reason, exchanges=records)


def _why_no_token(answer: exchange.Answer) -> str:
    if answer.status is None:
        return f"no answer from {answer.exchange.url} ({answer.exchange.error})"
    if answer.status == 401:
        return "Orange refused the client_id/client_secret pair (invalid_client)"
    return f"Orange's token endpoint answered {answer.status}"
