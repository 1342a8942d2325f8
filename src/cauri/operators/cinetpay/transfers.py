"""CinetPay's Transfer API (payouts to Mobile Money numbers), for accounts that have it.

A login token (apikey and the transfer password; cached, fetched again when CinetPay says it
expired or is invalid); the beneficiary registered as a contact (one already known is fine);
the transfer sent under our reference as `client_transaction_id` (a second send under it is
refused as existing: already accepted); its status read back by that reference. CinetPay's
transfer notifications are unsigned: hints. Answers are read by their `code` (CinetPay
documents no HTTP statuses). Sources in docs/OPERATORS.md, "CinetPay".
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import httpx

from cauri.kit import phone
from cauri.operators import balances, exchange
from cauri.operators.protocol import (
    Disbursement,
    Exchange,
    OperatorResult,
    Outcome,
    StatementUnavailable,
)

TOKEN_LIFETIME = 300.0  # seconds: CinetPay's tokens live 5 minutes
# The transfer balance's answer names no currency. Every operator Cauri pays out to through
# CinetPay is in the franc CFA (BCEAO) zone, and a transfer's amount is sent without one.
BALANCE_CURRENCY = "XOF"
ACCEPTED_BEFORE, ALREADY_CONTACT, NOT_FOUND = "805", "726", "723"
TOKEN_REFUSED = frozenset({"705", "706"})  # EXPIRED_TOKEN, INVALID_TOKEN
CREDENTIALS_REFUSED = frozenset({"701", "703"})
DONE, REFUSED = "VAL", "REJ"


def _code(fields: Any) -> str:
    return str(fields.get("code", "")) if isinstance(fields, dict) else ""


def split_number(digits: str) -> tuple[str, str]:
    """CinetPay's `prefix` (the country's dial code) and `phone` (the national number)."""
    for dial in phone.DIAL_CODES.values():
        if digits.startswith(dial):
            return dial, digits[len(dial) :]
    return "", digits


class Transfers:
    def __init__(self, client: httpx.AsyncClient, base: str, apikey: str, password: str) -> None:
        self._client, self._base = client, base.rstrip("/")
        self._apikey, self._password = apikey, password
        self._token: exchange.CachedToken[None] = exchange.CachedToken()
        self._login_refused: str | None = None  # CinetPay's code, when it refused the login

    async def send(self, disbursement: Disbursement, notify_url: str | None) -> OperatorResult:
        prefix, number = split_number(disbursement.phone_number.lstrip("+"))
        records: list[Exchange] = []
        contact = [
            {
                "prefix": prefix,
                "phone": number,
                "name": "Cauri",
                "surname": number,
                "email": f"{prefix}{number}@beneficiaires.cauri.invalid",
            }
        ]
        added = await self._call("contact", "POST", "/v1/transfer/contact", records, contact)
        if added is None or _code(added) not in ("0", ALREADY_CONTACT):
            return self._refused(added, tuple(records))
        item = {
            "prefix": prefix,
            "phone": number,
            "amount": disbursement.amount,
            "client_transaction_id": disbursement.reference,
            "notify_url": notify_url,
        }
        sent = await self._call(
            "transfer", "POST", "/v1/transfer/money/send/contact", records, [item]
        )
        code = _code(sent)
        if code in ("0", ACCEPTED_BEFORE):
            return OperatorResult(Outcome.PENDING, exchanges=tuple(records))
        return self._refused(sent, tuple(records))

    async def status(self, disbursement: Disbursement) -> OperatorResult:
        records: list[Exchange] = []
        query = {"client_transaction_id": disbursement.reference}
        found = await self._call(
            "transfer_check", "GET", "/v1/transfer/check/money", records, None, query
        )
        code = _code(found)
        if code == NOT_FOUND:
            return OperatorResult(Outcome.PENDING, unknown_reference=True, exchanges=tuple(records))
        data = found.get("data") if isinstance(found, dict) and code == "0" else None
        transfer = (
            data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else None
        )
        if transfer is None:
            return exchange.unknown(tuple(records))
        state = transfer.get("treatment_status")
        operator_id = transfer.get("operator_transaction_id") or transfer.get("transaction_id")
        reference = str(operator_id) if operator_id else None
        if state == DONE:
            return OperatorResult(
                Outcome.SUCCEEDED, operator_reference=reference, exchanges=tuple(records)
            )
        if state == REFUSED:
            reason = str(transfer.get("comment") or "transfer_refused").strip().lower()[:64]
            return OperatorResult(
                Outcome.FAILED, reason=reason or "transfer_refused", exchanges=tuple(records)
            )
        return OperatorResult(Outcome.PENDING, exchanges=tuple(records))

    async def balance(self) -> tuple[str, int]:
        """`GET /v1/transfer/check/balance`: `data {amount, inUsing, available}`, numbers in
        major units of a currency CinetPay does not name (BALANCE_CURRENCY). `amount` is the
        whole transfer balance, `inUsing` the part held by transfers not yet final."""
        found = await self._call("balance", "GET", "/v1/transfer/check/balance", [], None)
        data = found.get("data") if isinstance(found, dict) and _code(found) == "0" else None
        if not isinstance(data, dict):
            if found is not None:
                why = f"code {_code(found) or 'absent'}"
            elif self._login_refused:
                why = f"login refused (code {self._login_refused})"
            else:
                why = "no answer"
            raise StatementUnavailable(f"CinetPay's transfer balance: {why}")
        return balances.minor_units(data.get("amount"), BALANCE_CURRENCY, "CinetPay's transfer")

    def _refused(self, fields: Any, records: tuple[Exchange, ...]) -> OperatorResult:
        """A code that refuses the transfer as it stands fails it, as refused credentials
        do; no answer is unknown."""
        code = _code(fields)
        if fields is None and self._login_refused in CREDENTIALS_REFUSED:
            reason = f"operator_refused_credentials:cinetpay_{self._login_refused}"
            return OperatorResult(Outcome.FAILED, reason=reason, exchanges=records)
        if not code or code in ("-1", "709", "710"):
            return exchange.unknown(records)
        return OperatorResult(Outcome.FAILED, reason=f"cinetpay_{code}", exchanges=records)

    async def _call(
        self,
        action: str,
        method: str,
        path: str,
        records: list[Exchange],
        data: list[dict[str, Any]] | None,
        query: dict[str, str] | None = None,
    ) -> Any:
        """One call with a token; a token CinetPay refuses is replaced once. The answer's
        parsed body, or None when no answer (or no token) could be had, or one that says
        nothing (exchange.says_nothing)."""
        for _ in range(2):
            token = await self._token.get(lambda: self._login(records))
            if token is None:
                return None
            params = urlencode({"token": token, "lang": "fr", **(query or {})})
            answer = await exchange.send(
                self._client,
                action,
                method,
                f"{self._base}{path}?{params}",
                headers={"Accept": "application/json"},
                form={"data": json.dumps(data)} if data is not None else None,
            )
            # The token travels in the URL: the record keeps the path only.
            records.append(_without_query(answer.exchange, data))
            if exchange.says_nothing(answer.status):
                # A 500's body carries a `code` too ("500"): never a refusal. The transfer
                # may have been accepted before it; its status says.
                return None
            fields = exchange.parsed(answer.text)
            if _code(fields) in TOKEN_REFUSED:
                self._token.forget(token)
                continue
            return fields
        return None

    async def _login(self, records: list[Exchange]) -> exchange.Token | None:
        answer = await exchange.send(
            self._client,
            "login",
            "POST",
            f"{self._base}/v1/auth/login",
            headers={"Accept": "application/json"},
            form={"apikey": self._apikey, "password": self._password},
            secret_answer=True,
        )
        records.append(answer.exchange)
        fields = exchange.parsed(answer.text)
        data = fields.get("data") if isinstance(fields, dict) else None
        token = data.get("token") if isinstance(data, dict) else None
        if _code(fields) != "0" or not isinstance(token, str):
            self._login_refused = _code(fields) or None
            return None
        self._login_refused = None
        return exchange.Token(token, TOKEN_LIFETIME)


def _without_query(record: Exchange, data: list[dict[str, Any]] | None) -> Exchange:
    return replace(
        record,
        url=record.url.split("?", 1)[0],
        request_body=json.dumps(data) if data is not None else None,
    )
