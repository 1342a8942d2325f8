"""One HTTP exchange with an operator, recorded without its secrets, with failures as values.
Every connector sends through here: what is recorded, and what a network failure is, is
decided once."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, TypeVar

import httpx

from cauri.operators.config import ConnectorConfig
from cauri.operators.protocol import Exchange, OperatorResult, Outcome

MAX_RECORDED = 16_384  # characters of a body kept in the record


@dataclass(frozen=True)
class Answer:
    status: int | None  # None: no answer (timeout, refused connection, reset)
    text: str | None
    exchange: Exchange


async def send(
    client: httpx.AsyncClient,
    action: str,
    method: str,
    url: str,
    *,
    headers: dict[str, str],
    json_body: dict[str, Any] | None = None,
    form: dict[str, str] | None = None,
    secret_answer: bool = False,
    hidden: frozenset[str] = frozenset(),
) -> Answer:
    """Never raises for what the network does. The record keeps the URL, the JSON body sent
    (it holds no secret: credentials travel in headers, which are not recorded) and the
    answer, unless it is a secret itself (`secret_answer`: a token). A credential an
    operator wants in the body (Orange's merchant_key) is named in `hidden`: recorded masked."""
    # A form (an OAuth token request) carries credentials: it is never recorded.
    request = client.build_request(method, url, headers=headers, json=json_body, data=form)
    sent = None
    if json_body is not None:
        shown = {k: ("***" if k in hidden else v) for k, v in json_body.items()}
        sent = json.dumps(shown, ensure_ascii=False) if hidden else request.content.decode()
    started = time.monotonic()
    status: int | None = None
    text: str | None = None
    error: str | None = None
    try:
        response = await client.send(request)
        status, text = response.status_code, response.text
    except httpx.TimeoutException as exc:
        error = f"timeout: {type(exc).__name__}"
    except httpx.HTTPError as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
    duration = int((time.monotonic() - started) * 1000)
    recorded = None if secret_answer else (text[:MAX_RECORDED] if text else text)
    exchange = Exchange(action, method, url, sent, status, recorded, duration, error)
    return Answer(status, text, exchange)


def parsed(text: str | None) -> Any:
    """An answer's JSON body; None when there is none or it is not JSON."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def says_nothing(status: int | None) -> bool:
    """No answer, a 5xx or a 429: whatever its body, the operator said nothing for sure
    about the request (it may have accepted it before failing)."""
    return status is None or status >= 500 or status == 429


def unknown(exchanges: tuple[Exchange, ...]) -> OperatorResult:
    """The operator said nothing for sure (no answer, 5xx, 429, an unreadable body): the
    outcome stays pending, and is asked again."""
    return OperatorResult(Outcome.PENDING, unknown=True, exchanges=exchanges)


def stating(
    result: OperatorResult, *, amount: Any, currency: Any, kind: str | None = None
) -> OperatorResult:
    """The answer with what the operator says the request was, where it says it readably:
    an amount as a decimal string or a whole number (in major units), a currency code, the
    kind. The call protocol settles nothing on one that contradicts the recorded request."""
    return replace(
        result,
        amount=_decimal(amount),
        currency=currency if isinstance(currency, str) and currency else None,
        kind=kind,
    )


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


class NetworkConnector:
    """What every connector to an operator's network holds: its account's configuration and
    one HTTP client, created on first use in the event loop that uses it."""

    decides_offline = False

    def __init__(self, config: ConnectorConfig) -> None:
        self.config = config
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.config.timeout, connect=self.config.connect_timeout)
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


@dataclass(frozen=True)
class Token:
    value: str
    lifetime: float  # seconds, as the operator said


Refusal = TypeVar("Refusal")
# A token is replaced this long before the operator says it expires: a call started with it
# must not arrive after its end.
TOKEN_MARGIN = 60.0


class CachedToken(Generic[Refusal]):
    """One bearer token, shared: concurrent calls wait for one fetch instead of each asking
    (operators limit token requests), and it is reused until shortly before it expires, or
    until the operator refuses it (`forget`)."""

    def __init__(self) -> None:
        self._held: tuple[str, float] | None = None  # value, time.monotonic() of its end
        self._lock = asyncio.Lock()

    def _valid(self) -> str | None:
        held = self._held
        return held[0] if held is not None and held[1] > time.monotonic() else None

    async def get(self, fetch: Callable[[], Awaitable[Token | Refusal]]) -> str | Refusal:
        """The token held, else `fetch`'s: a new Token, or its refusal, handed back."""
        if (value := self._valid()) is not None:
            return value
        async with self._lock:
            if (value := self._valid()) is not None:
                return value  # fetched while this call waited
            got = await fetch()
            if not isinstance(got, Token):
                return got
            ends = time.monotonic() + max(got.lifetime - TOKEN_MARGIN, got.lifetime / 2)
            self._held = (got.value, ends)
            return got.value

    def forget(self, value: str | None = None) -> None:
        """The operator refused this token (or any): the next call fetches another."""
        if self._held is not None and value in (None, self._held[0]):
            self._held = None
