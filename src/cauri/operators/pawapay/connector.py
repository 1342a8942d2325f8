"""pawaPay's Merchant API v2 (deposits, payouts, refunds, toolkit), through the adapter
protocol.

Our reference is pawaPay's idempotency id (`depositId`, `payoutId`, `refundId`, UUID v4s).
pawaPay calls back to the URLs set in its dashboard (one per operation type, pointed at this
account's callback URL); the callback names the payment by its id. When the account signs
its callbacks (`signed_callbacks=true`), one whose RFC 9421 signature verifies settles its
payment; otherwise a callback is only a hint that Cauri asks pawaPay about (cauri.calls).
Sources in docs/OPERATORS.md, "pawaPay".
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

from cauri.kit.money import decimal_text
from cauri.operators import balances, exchange
from cauri.operators.config import ConnectorConfig
from cauri.operators.pawapay import answers, providers, signatures
from cauri.operators.protocol import (
    CallbackUpdate,
    CheckReport,
    Collection,
    Disbursement,
    Notice,
    OperatorResult,
    Outcome,
    RefundSupport,
    Resent,
    StatementUnavailable,
)

# pawaPay's `customerMessage`: 4 to 22 letters, digits or spaces.
_MESSAGE_CHARACTERS = re.compile(r"[^A-Za-z0-9 ]+")
MESSAGE_LENGTH = (4, 22)
# Each kind of payment: its path, and the name of its id in bodies and callbacks.
DEPOSITS, PAYOUTS, REFUNDS = "deposits", "payouts", "refunds"
ID_FIELDS = {DEPOSITS: "depositId", PAYOUTS: "payoutId", REFUNDS: "refundId"}
# Seconds between the status queries that fetch a redirect provider's authorisation URL.
AUTH_URL_WAITS = (0.5, 1.0, 1.5)
CONFIGURATION_LIFETIME = 3600.0
# Seconds after a fetch of pawaPay's public keys before a key id they did not hold makes
# Cauri fetch them again: forged callbacks naming made-up key ids cost one fetch a minute,
# not one each. A callback signed with a key pawaPay has just rotated in is refused (401)
# meanwhile, and pawaPay sends it again (it retries for 15 minutes).
KEY_FETCH_INTERVAL = 60.0
AVAILABILITY_LIFETIME = 60.0
# Seconds between the reads of a statement being built (pawaPay builds it asynchronously).
STATEMENT_WAITS = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
# pawaPay's operation types and statuses, as Cauri's actions and states.
OPERATION_ACTIONS = {"DEPOSIT": "collect", "PAYOUT": "disburse", "REFUND": "refund"}
STATES = {"OPERATIONAL": "operational", "DELAYED": "degraded", "CLOSED": "closed"}


def customer_message(text: str | None) -> str | None:
    cleaned = " ".join(_MESSAGE_CHARACTERS.sub(" ", text or "").split())[: MESSAGE_LENGTH[1]]
    return cleaned.strip() if len(cleaned.strip()) >= MESSAGE_LENGTH[0] else None


def msisdn(phone_number: str) -> str:
    """pawaPay takes the number with its country code, digits only."""
    return phone_number.lstrip("+")


class PawapayConnector(exchange.NetworkConnector):
    refunds = RefundSupport.PARTIAL  # `amount` of POST /v2/refunds
    # Its statements, read as cauri.reconciliation.formats.pawapay reads the dashboard's.
    format = "pawapay"

    def __init__(self, config: ConnectorConfig) -> None:
        super().__init__(config)
        self._base = config.base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {config.secrets['api_token']}"}
        self._providers = providers.table(config.settings.get("providers"))
        self._signed = config.settings.get("signed_callbacks", "false").lower() == "true"
        self._keys: dict[str, str] = {}
        self._keys_fetched_at = float("-inf")
        self._clock = time.monotonic  # the tests' own, to pass the interval
        self._auth_types: dict[str, str] = {}
        self._conf_read_at = -CONFIGURATION_LIFETIME
        self._availability: Mapping[tuple[str, str], str] = {}
        self._availability_read_at = -AVAILABILITY_LIFETIME
        self._keys_lock = asyncio.Lock()

    # The operations of the adapter protocol.

    async def collect(self, collection: Collection) -> OperatorResult:
        assert collection.phone_number is not None  # pawaPay collects from a wallet
        provider = self._providers.get(collection.operator.lower())
        if provider is None:
            return _not_carried(collection.operator)
        body = _movement(
            DEPOSITS, collection, collection.phone_number, provider, collection.description
        )
        if collection.otp and await self._auth_type(provider) == "PREAUTH":
            # A code the customer generated beforehand authorises the deposit (pawaPay
            # refuses the field for providers that prompt for a PIN).
            body["preAuthorisationCode"] = collection.otp
        result = await self._initiate(DEPOSITS, collection.reference, body)
        if result.next_step == "GET_AUTH_URL":
            # The provider approves on its own page (Wave): its address comes with the
            # deposit's status once pawaPay has it, within seconds.
            return await self._authorisation_url(collection.reference, result)
        return result

    async def collection_status(self, collection: Collection) -> OperatorResult:
        return await self._status(DEPOSITS, collection.reference)

    async def disburse(self, disbursement: Disbursement) -> OperatorResult:
        provider = self._providers.get(disbursement.operator.lower())
        if provider is None:
            return _not_carried(disbursement.operator)
        body = _movement(
            PAYOUTS, disbursement, disbursement.phone_number, provider, disbursement.reason
        )
        return await self._initiate(PAYOUTS, disbursement.reference, body)

    async def disbursement_status(self, disbursement: Disbursement) -> OperatorResult:
        return await self._status(PAYOUTS, disbursement.reference)

    async def refund(self, disbursement: Disbursement) -> OperatorResult:
        """pawaPay refunds a deposit it completed; money owed to someone without a deposit
        to refund (a plan's cancellation refund) is a payout."""
        if disbursement.refund_of is None:
            return await self.disburse(disbursement)
        body = {
            "refundId": disbursement.reference,
            "depositId": disbursement.refund_of,
            "amount": decimal_text(disbursement.amount, disbursement.currency),
            "currency": disbursement.currency,
        }
        return await self._initiate(REFUNDS, disbursement.reference, body)

    async def refund_status(self, disbursement: Disbursement) -> OperatorResult:
        if disbursement.refund_of is None:
            return await self.disbursement_status(disbursement)
        return await self._status(REFUNDS, disbursement.reference)

    async def parse_callback(self, notice: Notice) -> CallbackUpdate | None:
        """A deposit, payout or refund in its final state. Applied when the account signs
        its callbacks and this one's signature verifies; a hint otherwise."""
        fields = exchange.parsed(notice.body.decode("utf-8", "replace"))
        if not isinstance(fields, dict):
            return None
        # A refund's callback names its deposit too: its own id comes first.
        reference = next(
            (
                fields[ID_FIELDS[kind]]
                for kind in (REFUNDS, PAYOUTS, DEPOSITS)
                if isinstance(fields.get(ID_FIELDS[kind]), str)
            ),
            None,
        )
        if reference is None:
            return None
        if not self._signed:
            return CallbackUpdate(reference, answers.to_payment(fields, ()), verified=False)
        if not await self._verified(notice):
            return None
        return CallbackUpdate(reference, answers.to_payment(fields, ()), verified=True)

    async def resend_notification(self, action: str, request: Collection | Disbursement) -> Resent:
        """pawaPay sends the callback of a payment in its final state again."""
        if isinstance(request, Collection):
            kind = DEPOSITS
        else:
            kind = REFUNDS if action == "refund" and request.refund_of else PAYOUTS
        answer = await exchange.send(
            self.client,
            "resend_callback",
            "POST",
            f"{self._base}/v2/{kind}/resend-callback/{request.reference}",
            headers=self._headers,
        )
        body = exchange.parsed(answer.text)
        state = body.get("status") if isinstance(body, dict) else None
        if answer.status == 200 and state == "ACCEPTED":
            return Resent(True, "pawaPay sends its callback again", answer.exchange)
        why = answers.failure_code(body) if isinstance(body, dict) else None
        return Resent(
            False,
            f"pawaPay did not accept: {why or state or f'HTTP {answer.status}'}",
            answer.exchange,
        )

    async def statement(self, day: date) -> AsyncIterator[str]:
        """Each wallet's statement of the day (`GET /v2/wallet-balances` lists the wallets):
        asked for (`POST /v2/statements`), read until it is built (`GET
        /v2/statements/{statementId}`, waits growing to STATEMENT_WAITS' last, for at most
        their sum), then downloaded from its `downloadUrl`, a pre-signed address that is sent
        no token. One CSV after another, each with its header."""
        for wallet in await self._wallets():
            named = {
                k: str(wallet[k]) for k in ("country", "currency", "provider") if wallet.get(k)
            }
            yield await self._wallet_statement(named, day)

    async def balances(self) -> Mapping[str, int]:
        """Every wallet's balance (one wallet per country, or per provider), summed per
        currency: the account's XOF wallets of Benin, Burkina Faso, Côte d'Ivoire and Senegal
        are one total."""
        return balances.summed(
            balances.minor_units(
                w.get("balance"), w.get("currency"), f"pawaPay's wallet {w.get('country')}"
            )
            for w in await self._wallets()
        )

    async def _wallets(self) -> list[dict[str, Any]]:
        """`GET /v2/wallet-balances`: the account's wallets, each `{country, balance,
        currency, provider}`, the balance a string in major units."""
        answer = await exchange.send(
            self.client,
            "wallet_balances",
            "GET",
            f"{self._base}/v2/wallet-balances",
            headers=self._headers,
        )
        body = balances.parsed(answer.text)
        wallets = body.get("balances") if isinstance(body, dict) else None
        if answer.status != 200 or not isinstance(wallets, list):
            code = answers.failure_code(body) if isinstance(body, dict) else None
            raise StatementUnavailable(
                f"pawaPay's wallets: HTTP {answer.status} {code or ''}".strip()
            )
        return [w for w in wallets if isinstance(w, dict)]

    async def _wallet_statement(self, wallet: dict[str, str], day: date) -> str:
        start = datetime.combine(day, datetime.min.time())
        asked = await exchange.send(
            self.client,
            "statement",
            "POST",
            f"{self._base}/v2/statements",
            headers=self._headers,
            json_body={
                "wallet": wallet,
                "startDate": start.isoformat(),
                "endDate": (start + timedelta(days=1)).isoformat(),
                "compressed": False,
            },
        )
        body = exchange.parsed(asked.text)
        if asked.status != 200 or not isinstance(body, dict) or body.get("status") != "ACCEPTED":
            raise StatementUnavailable(
                f"pawaPay refused the statement of {wallet.get('country')}: HTTP {asked.status} "
                f"{answers.failure_code(body) if isinstance(body, dict) else ''}".strip()
            )
        statement_id = str(body.get("statementId"))
        for wait in STATEMENT_WAITS:
            read = await exchange.send(
                self.client,
                "statement_status",
                "GET",
                f"{self._base}/v2/statements/{statement_id}",
                headers=self._headers,
            )
            found = exchange.parsed(read.text)
            data = found.get("data") if isinstance(found, dict) else None
            state = data.get("status") if isinstance(data, dict) else None
            if isinstance(data, dict) and state == "COMPLETED" and data.get("downloadUrl"):
                return await self._download(str(data["downloadUrl"]))
            if state == "FAILED":
                reason = data.get("failureReason") if isinstance(data, dict) else None
                raise StatementUnavailable(f"pawaPay's statement {statement_id} failed: {reason}")
            await asyncio.sleep(wait)
        raise StatementUnavailable(f"pawaPay's statement {statement_id} is not ready yet")

    async def _download(self, url: str) -> str:
        got = await exchange.send(self.client, "statement_file", "GET", url, headers={})
        if got.status != 200 or got.text is None:
            raise StatementUnavailable(f"pawaPay's statement file: HTTP {got.status}")
        return got.text if got.text.endswith("\n") else got.text + "\n"

    async def predict_operator(self, phone_number: str) -> str | None:
        """pawaPay's predict-provider, as a catalogue operator code this account carries."""
        answer = await exchange.send(
            self.client,
            "predict_provider",
            "POST",
            f"{self._base}/v2/predict-provider",
            headers=self._headers,
            json_body={"phoneNumber": msisdn(phone_number)},
        )
        body = exchange.parsed(answer.text)
        provider = body.get("provider") if answer.status == 200 and isinstance(body, dict) else None
        return next((op for op, code in self._providers.items() if code == provider), None)

    async def availability(self, *, ask: bool) -> Mapping[tuple[str, str], str]:
        """pawaPay's availability of each provider this account maps, read at most once a
        minute: OPERATIONAL, DELAYED (degraded) or CLOSED per operation type."""
        stale = time.monotonic() - self._availability_read_at > AVAILABILITY_LIFETIME
        if ask and stale:
            answer = await exchange.send(
                self.client,
                "availability",
                "GET",
                f"{self._base}/v2/availability",
                headers=self._headers,
            )
            body = exchange.parsed(answer.text)
            if answer.status == 200 and isinstance(body, list):
                self._availability = availability(body, self._providers)
            self._availability_read_at = time.monotonic()
        return self._availability

    async def check(self) -> CheckReport:
        """Reads the account's active configuration: which providers it has, their limits
        and how each authorises a payment, and whether callbacks are signed."""
        answer = await exchange.send(
            self.client, "active_conf", "GET", f"{self._base}/v2/active-conf", headers=self._headers
        )
        body = exchange.parsed(answer.text)
        if answer.status is None:
            return CheckReport(
                ok=False, detail=f"no answer from {answer.exchange.url} ({answer.exchange.error})"
            )
        if answer.status in (401, 403):
            return CheckReport(
                ok=False, detail=f"pawaPay refused the api_token (HTTP {answer.status})"
            )
        if answer.status != 200 or not isinstance(body, dict):
            return CheckReport(ok=False, detail=f"pawaPay answered {answer.status} to active-conf")
        facts = active_configuration(body, self._providers)
        signed_there = facts.get("signed_callbacks") == "yes"
        if signed_there != self._signed:
            return CheckReport(
                ok=False,
                detail="pawaPay signs its callbacks: set signed_callbacks=true"
                if signed_there
                else "signed_callbacks=true, but pawaPay does not sign this account's callbacks",
                facts=facts,
            )
        return CheckReport(
            ok=True,
            detail=f"authenticated ({self.config.environment}): {facts['carried']}",
            facts=facts,
        )

    # The exchanges.

    async def _initiate(
        self, kind: str, reference: str, body: dict[str, Any]
    ) -> answers.Initiation:
        answer = await exchange.send(
            self.client,
            kind.rstrip("s"),
            "POST",
            f"{self._base}/v2/{kind}",
            headers=self._headers,
            json_body=body,
        )
        return answers.to_initiation(answer.status, answer.text, reference, (answer.exchange,))

    async def _authorisation_url(self, reference: str, accepted: OperatorResult) -> OperatorResult:
        exchanges = accepted.exchanges
        for delay in AUTH_URL_WAITS:
            await asyncio.sleep(delay)
            status = await self._status(DEPOSITS, reference)
            exchanges = (*exchanges, *status.exchanges)
            if status.redirect_url is not None or status.outcome is not Outcome.PENDING:
                return replace(status, exchanges=exchanges)
        # Not yet: the payment stays pending, and the customer's page comes with a later
        # status query or callback.
        return replace(accepted, exchanges=exchanges)

    async def _auth_type(self, provider: str) -> str:
        """How the provider authorises deposits, as the account's active configuration says
        (read once an hour); pawaPay's documented type when it cannot be read."""
        if time.monotonic() - self._conf_read_at > CONFIGURATION_LIFETIME:
            answer = await exchange.send(
                self.client,
                "active_conf",
                "GET",
                f"{self._base}/v2/active-conf",
                headers=self._headers,
            )
            body = exchange.parsed(answer.text)
            if answer.status == 200 and isinstance(body, dict):
                self._auth_types = auth_types(body)
                self._conf_read_at = time.monotonic()
        default = "PREAUTH" if provider in providers.PREAUTH else "PROVIDER_AUTH"
        return self._auth_types.get(provider, default)

    async def _status(self, kind: str, reference: str) -> OperatorResult:
        answer = await exchange.send(
            self.client,
            f"{kind.rstrip('s')}_status",
            "GET",
            f"{self._base}/v2/{kind}/{reference}",
            headers=self._headers,
        )
        return answers.to_status(answer.status, answer.text, (answer.exchange,))

    async def _verified(self, notice: Notice) -> bool:
        signed = signatures.signature_input(notice)
        if signed is None:
            return False
        if self._fetch_due(signed.keyid):
            await self._fetch_keys(signed.keyid)
        return signatures.verified(notice, self._keys, signed)

    def _fetch_due(self, keyid: str) -> bool:
        recent = self._clock() - self._keys_fetched_at < KEY_FETCH_INTERVAL
        return keyid not in self._keys and not recent

    async def _fetch_keys(self, wanted: str) -> None:
        """pawaPay's public keys, fetched on first need and again for a key id not yet
        seen (pawaPay rotates them), at most once per KEY_FETCH_INTERVAL; concurrent
        callbacks wait for one fetch."""
        async with self._keys_lock:
            if not self._fetch_due(wanted):
                return
            # Also when pawaPay does not answer: the interval bounds what callbacks cost it.
            self._keys_fetched_at = self._clock()
            answer = await exchange.send(
                self.client,
                "public_keys",
                "GET",
                f"{self._base}/v2/public-key/http",
                headers=self._headers,
            )
            if answer.status == 200:
                self._keys.update(signatures.public_keys(exchange.parsed(answer.text)))


def _movement(
    kind: str,
    request: Collection | Disbursement,
    phone_number: str,
    provider: str,
    message: str | None,
) -> dict[str, Any]:
    """A deposit's or a payout's body: the id, the wallet (the payer's or the recipient's),
    the amount, and the customer's message when there is one to show."""
    wallet = {"phoneNumber": msisdn(phone_number), "provider": provider}
    body: dict[str, Any] = {
        ID_FIELDS[kind]: request.reference,
        "payer" if kind == DEPOSITS else "recipient": {"type": "MMO", "accountDetails": wallet},
        "amount": decimal_text(request.amount, request.currency),
        "currency": request.currency,
        "clientReferenceId": request.reference,
    }
    if shown := customer_message(message):
        body["customerMessage"] = shown
    return body


def _not_carried(operator: str) -> OperatorResult:
    """Nothing was sent: this account has no pawaPay provider for the operator."""
    return OperatorResult(Outcome.FAILED, reason=f"operator_not_carried:{operator}")


def availability(body: list[Any], table: Mapping[str, str]) -> dict[tuple[str, str], str]:
    """`GET /v2/availability` (per country, per provider, each operation type's status) as
    (operator, action) → state, for the operators the account maps."""
    by_provider: dict[str, list[str]] = {}
    for operator, provider in table.items():
        by_provider.setdefault(provider, []).append(operator)
    found: dict[tuple[str, str], str] = {}
    for country in body:
        for provider in country.get("providers") or [] if isinstance(country, dict) else []:
            operations = provider.get("operationTypes") if isinstance(provider, dict) else None
            if not isinstance(operations, dict):
                continue
            for operator in by_provider.get(str(provider.get("provider")), []):
                for operation, status in operations.items():
                    action, state = OPERATION_ACTIONS.get(operation), STATES.get(str(status))
                    if action and state:
                        found[(operator, action)] = state
    return found


def auth_types(body: Mapping[str, Any]) -> dict[str, str]:
    """Each provider's authorisation type for deposits, from the active configuration."""
    found: dict[str, str] = {}
    for country in body.get("countries") or []:
        for provider in country.get("providers") or []:
            for currency in provider.get("currencies") or []:
                deposit = (currency.get("operationTypes") or {}).get("DEPOSIT")
                if isinstance(deposit, dict) and isinstance(deposit.get("authType"), str):
                    found[str(provider.get("provider"))] = deposit["authType"]
    return found


def active_configuration(body: Mapping[str, Any], table: Mapping[str, str]) -> dict[str, Any]:
    """What `cauri connectors check` shows of pawaPay's active configuration: each provider
    of the account with, per operation, its limits, authorisation type and status; and which
    of Cauri's operators this account carries."""
    offered: dict[str, str] = {}
    for country in body.get("countries") or []:
        for provider in country.get("providers") or []:
            code = provider.get("provider")
            if not isinstance(code, str):
                continue
            lines = []
            for currency in provider.get("currencies") or []:
                for operation, terms in (currency.get("operationTypes") or {}).items():
                    if not isinstance(terms, dict):
                        continue
                    lines.append(
                        f"{operation} {terms.get('minAmount', '?')}-{terms.get('maxAmount', '?')} "
                        f"{currency.get('currency', '')} {terms.get('authType', '')} "
                        f"{terms.get('status', '')}".replace("  ", " ").strip()
                    )
            offered[code] = "; ".join(lines) or "-"
    signature = body.get("signatureConfiguration") or {}
    carried = sorted(op for op, provider in table.items() if provider in offered)
    missing = sorted(op for op, provider in table.items() if provider not in offered)
    return {
        "company": body.get("companyName", "-"),
        "signed_callbacks": "yes" if signature.get("signedCallbacks") else "no",
        "signed_requests_only": "yes" if signature.get("signedRequestsOnly") else "no",
        "carried": "carries " + (", ".join(carried) or "none of Cauri's operators"),
        "not_on_account": ", ".join(missing) or "-",
        "providers": offered,
    }
