"""MTN MoMo Open API (collection, disbursement, refund), through the adapter protocol.

Each request is sent under our idempotency reference as `X-Reference-Id` (a UUID v4), to the
`X-Target-Environment` of the account, with `X-Callback-Url` when Cauri has a public URL.
MTN does not sign its callbacks: `parse_callback` only says which request one is about, and
Cauri then asks MTN (cauri.calls). Sources in docs/OPERATORS.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from cauri.kit.money import decimal_text
from cauri.operators import balances, exchange
from cauri.operators.config import ConnectorConfig
from cauri.operators.mtn_momo import answers
from cauri.operators.mtn_momo.tokens import Refusal, Tokens
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

COLLECTION, DISBURSEMENT = "collection", "disbursement"
# MTN's sandbox, the one target environment whose currency (EUR) is not the payments' own.
SANDBOX = "sandbox"
# MTN's limit on payerMessage and payeeNote (its API reference: 160 characters).
NOTE_LENGTH = 160


def _note(text: str | None, fallback: str) -> str:
    return (text or fallback)[:NOTE_LENGTH]


class MtnMomoConnector(exchange.NetworkConnector):
    refunds = RefundSupport.PARTIAL  # `amount` of POST /disbursement/v1_0/refund

    def __init__(self, config: ConnectorConfig) -> None:
        super().__init__(config)
        self._base = config.base_url.rstrip("/")
        self._environment = config.settings["target_environment"]
        # Only in MTN's sandbox (the kind refuses it elsewhere; an account stored before that
        # rule keeps it, and it is ignored): every other request goes in its own currency.
        in_sandbox = self._environment == SANDBOX
        self._currency = (config.settings.get("currency") or None) if in_sandbox else None
        secrets = config.secrets
        self._subscription_keys = {
            COLLECTION: secrets["collection_subscription_key"],
            DISBURSEMENT: secrets["disbursement_subscription_key"],
        }
        self._tokens = Tokens(
            self._base, secrets["api_user"], secrets["api_key"], self._subscription_keys
        )

    # The operations of the adapter protocol.

    async def collect(self, collection: Collection) -> OperatorResult:
        assert collection.phone_number is not None  # MTN collects from a number only
        body = {
            "amount": decimal_text(collection.amount, collection.currency),
            "currency": self._currency or collection.currency,
            "externalId": collection.reference,
            "payer": {"partyIdType": "MSISDN", "partyId": collection.phone_number},
            "payerMessage": _note(collection.description, "Paiement"),
            "payeeNote": _note(collection.description, collection.reference),
        }
        return await self._request(
            COLLECTION, "requesttopay", collection.reference, collection.callback_url, body
        )

    async def collection_status(self, collection: Collection) -> OperatorResult:
        return await self._status(COLLECTION, "requesttopay", collection.reference)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        body = {
            **self._disbursement_body(disbursement),
            "payee": {"partyIdType": "MSISDN", "partyId": disbursement.phone_number},
        }
        return await self._request(
            DISBURSEMENT, "transfer", disbursement.reference, disbursement.callback_url, body
        )

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return await self._status(DISBURSEMENT, "transfer", disbursement.reference)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        """MTN refunds a collection it made (`referenceIdToRefund`) to its payer."""
        if disbursement.refund_of is None:
            return await self.disburse(disbursement)
        body = {
            **self._disbursement_body(disbursement),
            "referenceIdToRefund": disbursement.refund_of,
        }
        return await self._request(
            DISBURSEMENT, "refund", disbursement.reference, disbursement.callback_url, body
        )

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        if disbursement.refund_of is None:
            return await self.disbursement_status(disbursement)
        return await self._status(DISBURSEMENT, "refund", disbursement.reference)

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """MTN's callback carries the transaction as a status query shows it; our reference
        is its `externalId` (or `referenceId` where MTN adds it). Never verified: MTN signs
        nothing."""
        try:
            fields = json.loads(notice.body)
        except ValueError:
            return None
        if not isinstance(fields, dict):
            return None
        reference = fields.get("referenceId") or fields.get("externalId")
        if not isinstance(reference, str) or not reference:
            return None
        result = answers.to_status(200, notice.body.decode("utf-8", "replace"), ())
        return CallbackUpdate(reference, result, verified=False)

    async def check(self) -> CheckReport:
        """Authenticates on both products and reads their balances."""
        facts: dict[str, Any] = {}
        for product in (COLLECTION, DISBURSEMENT):
            answer = await self._get(product, f"/{product}/v1_0/account/balance")
            if isinstance(answer, Refusal):
                return CheckReport(ok=False, detail=_why(product, answer), facts=facts)
            if answer.status != 200:
                return CheckReport(ok=False, detail=_why(product, answer), facts=facts)
            try:
                balance = json.loads(answer.text or "")
                facts[product] = f"{balance['availableBalance']} {balance['currency']}"
            except (ValueError, KeyError, TypeError):
                return CheckReport(
                    ok=False, detail=f"{product}: unreadable balance answer", facts=facts
                )
        return CheckReport(
            ok=True,
            detail=f"authenticated on collection and disbursement ({self._environment})",
            facts=facts,
        )

    async def balances(self) -> Mapping[str, int]:
        """Both products' accounts (`GET /{product}/v1_0/account/balance`), summed per
        currency: the connector collects into the collection account and pays out (refunds
        too) from the disbursement account, and is configured for both."""
        found = []
        for product in (COLLECTION, DISBURSEMENT):
            answer = await self._get(product, f"/{product}/v1_0/account/balance")
            if answer.status != 200:
                raise StatementUnavailable(_why(product, answer))
            body = balances.parsed(answer.text)
            if not isinstance(body, dict):
                raise StatementUnavailable(f"{product}: unreadable balance answer")
            amount, currency = body.get("availableBalance"), body.get("currency")
            found.append(balances.minor_units(amount, currency, f"{product} balance"))
        return balances.summed(found)

    # The exchanges.

    def _disbursement_body(self, disbursement: Disbursement) -> dict[str, Any]:
        return {
            "amount": decimal_text(disbursement.amount, disbursement.currency),
            "currency": self._currency or disbursement.currency,
            "externalId": disbursement.reference,
            "payerMessage": _note(disbursement.reason, "Transfert"),
            "payeeNote": _note(disbursement.reason, disbursement.reference),
        }

    def _headers(self, product: str, token: str) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {token}",
            "Ocp-Apim-Subscription-Key": self._subscription_keys[product],
            "X-Target-Environment": self._environment,
        }

    async def _request(
        self,
        product: str,
        path: str,
        reference: str,
        callback_url: str | None,
        body: dict[str, Any],
    ) -> OperatorResult:
        """POSTs one request; a 401 gets one more try with a new token."""
        records: list[Exchange] = []
        for _ in range(2):
            token = await self._tokens.get(self.client, product)
            if isinstance(token, Refusal):
                return _without_token(token, (*records, token.exchange))
            headers = self._headers(product, token) | {"X-Reference-Id": reference}
            if callback_url is not None:
                headers["X-Callback-Url"] = callback_url
            answer = await exchange.send(
                self.client,
                path,
                "POST",
                f"{self._base}/{product}/v1_0/{path}",
                headers=headers,
                json_body=body,
            )
            records.append(answer.exchange)
            if answer.status != 401:
                break
            self._tokens.forget(product, token)
        return answers.to_request(answer.status, answer.text, reference, tuple(records))

    async def _status(self, product: str, path: str, reference: str) -> OperatorResult:
        answer = await self._get(product, f"/{product}/v1_0/{path}/{reference}", f"{path}_status")
        if isinstance(answer, Refusal):
            return exchange.unknown((answer.exchange,))
        result = answers.to_status(answer.status, answer.text, (answer.exchange,))
        # The account's own currency (the sandbox's EUR) is not the request's: not compared.
        return replace(result, currency=None) if self._currency else result

    async def _get(
        self, product: str, path: str, action: str = "balance"
    ) -> exchange.Answer | Refusal:
        token = await self._tokens.get(self.client, product)
        if isinstance(token, Refusal):
            return token
        answer = await exchange.send(
            self.client, action, "GET", self._base + path, headers=self._headers(product, token)
        )
        if answer.status == 401:
            self._tokens.forget(product, token)
        return answer


def _without_token(refusal: Refusal, records: tuple[Exchange, ...]) -> OperatorResult:
    """No token, so nothing was sent: refused credentials fail the request (it would be
    refused again); a token endpoint that did not answer leaves it unknown (ask again)."""
    if refusal.status in (400, 401, 403):
        code = answers.error_code(refusal.text) or f"http_{refusal.status}"
        return OperatorResult(
            Outcome.FAILED, reason=f"operator_refused_credentials:{code}", exchanges=records
        )
    return exchange.unknown(records)


def _why(product: str, answer: exchange.Answer | Refusal) -> str:
    """What is wrong, in plain words, from the first exchange that went wrong."""
    record = answer.exchange
    if answer.status is None:
        return f"{product}: no answer from {record.url} ({record.error})"
    code = answers.error_code(answer.text) or ""
    if record.action == "token" and answer.status == 401:
        if "subscription" in code:
            return f"{product}: MTN refused the {product}_subscription_key ({code})"
        return f"{product}: MTN refused the api_user/api_key pair ({code or 'HTTP 401'})"
    if answer.status in (401, 403):
        return f"{product}: MTN refused the request ({answer.status} {code})"
    if "target_environment" in code:
        return f"{product}: MTN refused target_environment ({code})"
    return f"{product}: MTN answered {answer.status} {code}".rstrip()
