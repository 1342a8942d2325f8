"""CinetPay's Checkout API v2 (cards and Mobile Money), through the adapter protocol.

A payment is initialised under our reference as CinetPay's `transaction_id`, on the channel of
its payment mode (CREDIT_CARD for VISA and MASTERCARD, MOBILE_MONEY otherwise); the customer
pays on CinetPay's page (a Mobile Money payment's `payment_url`; behind Cauri's own page for a
card). CinetPay's notification is authenticated by its `x-token` (an HMAC-SHA256 of its
fields with the account's secret key), then only prompts the status check, which decides.
CinetPay documents no HTTP statuses: answers are read by their `code`. Sources in
docs/OPERATORS.md, "CinetPay".
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from cauri.operators import catalogue, exchange
from cauri.operators.cinetpay.transfers import Transfers
from cauri.operators.config import ConnectorConfig
from cauri.operators.protocol import (
    OPERATOR_PAGE,
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

# The notification's fields, in the order CinetPay concatenates them for its x-token.
X_TOKEN_FIELDS = (
    "cpm_site_id",
    "cpm_trans_id",
    "cpm_trans_date",
    "cpm_amount",
    "cpm_currency",
    "signature",
    "payment_method",
    "cel_phone_num",
    "cpm_phone_prefixe",
    "cpm_language",
    "cpm_version",
    "cpm_payment_config",
    "cpm_page_action",
    "cpm_custom",
    "cpm_designation",
    "cpm_error_message",
)
CREATED, PAID = "201", "00"
CREDENTIAL_CODES = frozenset({"609", "613"})  # AUTH_NOT_FOUND, ERROR_SITE_ID_NOTVALID
WAITING = frozenset({"WAITING_FOR_CUSTOMER"})
# CinetPay takes amounts in multiples of 5 (but in USD).
AMOUNT_STEP = 5
NOT_OFFERED = "cinetpay_transfers_not_configured"
NO_REFUNDS = "cinetpay_refunds_not_offered"
TRANSFER_BASE = "https://client.cinetpay.com"


def x_token(fields: dict[str, str], secret: str) -> str:
    data = "".join(fields.get(name, "") for name in X_TOKEN_FIELDS)
    return hmac.new(secret.encode(), data.encode(), hashlib.sha256).hexdigest()


class CinetPayConnector(exchange.NetworkConnector):
    refunds = RefundSupport.NONE  # the Checkout API has no refund

    def __init__(self, config: ConnectorConfig) -> None:
        super().__init__(config)
        self._base = config.base_url.rstrip("/")
        self._site_id = config.settings["site_id"]
        self._apikey = config.secrets["apikey"]
        self._secret_key = config.secrets["secret_key"]
        self._return_url = config.settings["return_url"]
        self._transfer_base = config.settings.get("transfer_base_url") or TRANSFER_BASE
        self._transfer_password = config.secrets.get("transfer_password") or None
        self._transfers: Transfers | None = None
        self._card_holder = {
            name: config.settings.get(f"card_{name}", "")
            for name in ("phone_number", "address", "city", "country", "state", "zip_code")
        }

    # The operations of the adapter protocol.

    async def collect(self, collection: Collection) -> OperatorResult:
        if collection.currency != "USD" and collection.amount % AMOUNT_STEP:
            # CinetPay would refuse it (628): nothing is sent.
            return OperatorResult(Outcome.FAILED, reason="cinetpay_amount_not_multiple_of_5")
        mode = catalogue.find(collection.operator)
        card = mode is not None and mode.is_card
        body: dict[str, Any] = {
            "apikey": self._apikey,
            "site_id": self._site_id,
            "transaction_id": collection.reference,
            "amount": collection.amount,
            "currency": collection.currency,
            "description": (collection.description or "Paiement")[:255],
            "notify_url": collection.callback_url,
            "return_url": collection.return_url or self._return_url,
            "channels": "CREDIT_CARD" if card else "MOBILE_MONEY",
            "lang": "fr",
            "metadata": collection.reference,
        }
        if card:
            body |= self._card_fields(collection)
        answer = await exchange.send(
            self.client,
            "payment",
            "POST",
            f"{self._base}/v2/payment",
            headers={"Content-Type": "application/json"},
            json_body=body,
            hidden=frozenset({"apikey"}),
        )
        fields = exchange.parsed(answer.text)
        if not isinstance(fields, dict) or exchange.says_nothing(answer.status):
            return exchange.unknown((answer.exchange,))
        code, data = str(fields.get("code", "")), fields.get("data")
        if code == CREATED and isinstance(data, dict) and isinstance(data.get("payment_url"), str):
            page = data["payment_url"]
            return OperatorResult(
                Outcome.PENDING,
                redirect_url=page,
                operator_data={OPERATOR_PAGE: page},
                exchanges=(answer.exchange,),
            )
        if not code:
            return exchange.unknown((answer.exchange,))
        reason = f"cinetpay_{code}"
        if code in CREDENTIAL_CODES:
            reason = f"operator_refused_credentials:{reason}"
        return OperatorResult(Outcome.FAILED, reason=reason, exchanges=(answer.exchange,))

    async def collection_status(self, collection: Collection) -> OperatorResult:
        answer = await self._checked(collection.reference)
        return to_check(answer.status, exchange.parsed(answer.text), (answer.exchange,))

    async def _checked(self, transaction_id: str) -> exchange.Answer:
        body = {"apikey": self._apikey, "site_id": self._site_id, "transaction_id": transaction_id}
        return await exchange.send(
            self.client,
            "payment_check",
            "POST",
            f"{self._base}/v2/payment/check",
            headers={"Content-Type": "application/json"},
            json_body=body,
            hidden=frozenset({"apikey"}),
        )

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        transfers = self._transfer_api()
        if transfers is None:
            return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)
        return await transfers.send(disbursement, disbursement.callback_url)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        transfers = self._transfer_api()
        if transfers is None:
            return OperatorResult(Outcome.FAILED, reason=NOT_OFFERED)
        return await transfers.status(disbursement)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        """CinetPay's API refunds no payment (the kind has no `refund` route)."""
        return OperatorResult(Outcome.FAILED, reason=NO_REFUNDS)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        return OperatorResult(Outcome.FAILED, reason=NO_REFUNDS)

    def _transfer_api(self) -> Transfers | None:
        """The Transfer API, for an account given its password; created with the client."""
        if self._transfer_password is None:
            return None
        if self._transfers is None:
            self._transfers = Transfers(
                self.client, self._transfer_base, self._apikey, self._transfer_password
            )
        return self._transfers

    async def aclose(self) -> None:
        self._transfers = None
        await super().aclose()

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """The form CinetPay posts, authenticated by its x-token; a hint, for the status
        check decides (CinetPay's own advice)."""
        fields = dict(parse_qsl(notice.body.decode("utf-8", "replace"), keep_blank_values=True))
        if fields.get("client_transaction_id") and "cpm_trans_id" not in fields:
            # A transfer's notification: unsigned (CinetPay documents none), so a hint.
            reference = fields["client_transaction_id"]
            return CallbackUpdate(reference, OperatorResult(Outcome.PENDING), verified=False)
        given = notice.headers.get("x-token", "")
        # Compared as bytes: a header of non-ASCII characters is as wrong as any other.
        if not fields.get("cpm_trans_id") or not hmac.compare_digest(
            given.encode(), x_token(fields, self._secret_key).encode()
        ):
            return None
        if fields.get("cpm_site_id") != self._site_id:
            return None
        return CallbackUpdate(
            fields["cpm_trans_id"], OperatorResult(Outcome.PENDING), verified=False
        )

    async def check(self) -> CheckReport:
        """A status check of a transaction that does not exist: CinetPay answers it only for
        the right apikey and site_id."""
        answer = await self._checked("cauri-connectors-check")
        fields = exchange.parsed(answer.text)
        code = str(fields.get("code", "")) if isinstance(fields, dict) else ""
        if answer.status is None:
            return CheckReport(
                ok=False, detail=f"no answer from CinetPay ({answer.exchange.error})"
            )
        if code in CREDENTIAL_CODES:
            return CheckReport(ok=False, detail=f"CinetPay refused apikey/site_id (code {code})")
        if not code:
            return CheckReport(ok=False, detail=f"CinetPay answered {answer.status}, unreadable")
        detail = f"authenticated (site {self._site_id})"
        return CheckReport(ok=True, detail=detail, facts={"site_id": self._site_id})

    def _card_fields(self, collection: Collection) -> dict[str, str]:
        """The card holder CinetPay's card form needs: the payment's customer, and the
        account's defaults for what Cauri's API does not ask (address, city, …)."""
        customer = collection.customer or {}
        return {
            "customer_id": collection.reference,
            "customer_name": customer.get("lastname", ""),
            "customer_surname": customer.get("firstname", ""),
            "customer_email": customer.get("email", ""),
            "customer_phone_number": self._card_holder["phone_number"],
            "customer_address": self._card_holder["address"],
            "customer_city": self._card_holder["city"],
            "customer_country": self._card_holder["country"],
            "customer_state": self._card_holder["state"],
            "customer_zip_code": self._card_holder["zip_code"],
        }


class CinetPayTransfersConnector(CinetPayConnector):
    """An account given CinetPay's Transfer API (its `transfer_password`): payouts, and the
    transfer balance they are paid from (the one balance CinetPay's APIs give)."""

    async def balances(self) -> Mapping[str, int]:
        transfers = self._transfer_api()
        assert transfers is not None  # built with a transfer password only
        currency, minor = await transfers.balance()
        return {currency: minor}


def to_check(status: int | None, fields: Any, records: tuple[Exchange, ...]) -> OperatorResult:
    """`/v2/payment/check`: `data.status` ACCEPTED (paid), REFUSED (failed, the code says
    why), WAITING_FOR_CUSTOMER; a transaction CinetPay does not know (624 with no data):
    never received. Anything else says nothing for sure."""
    if exchange.says_nothing(status) or not isinstance(fields, dict):
        return exchange.unknown(records)
    code, data = str(fields.get("code", "")), fields.get("data")
    if not isinstance(data, dict):
        if code == "624":
            return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=records)
        return exchange.unknown(records)
    state = data.get("status")
    operator_id = data.get("operator_id")
    reference = str(operator_id) if operator_id else None
    if state == "ACCEPTED" and code == PAID:
        return OperatorResult(Outcome.SUCCEEDED, operator_reference=reference, exchanges=records)
    if state == "REFUSED":
        message = str(fields.get("message") or code).lower()
        return OperatorResult(
            Outcome.FAILED, operator_reference=reference, reason=message, exchanges=records
        )
    if state in WAITING:
        return OperatorResult(Outcome.PENDING, exchanges=records)
    return exchange.unknown(records)
