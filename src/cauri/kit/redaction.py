"""What a log line must never carry: secrets (API keys, webhook secrets, passwords) and
personal data (phone numbers, names, emails), wherever they hide in it: a field, a nested
value, an exception's text (a SQL error, a validation error's `input_value`, a DETAIL line).

Fields are recognised by name; free text by shape. A name in free text has no shape, so it
is caught only after a field-like label (`'firstname': 'Awa'`, `"lastname": "Diallo"`).

The work follows what can carry a secret: numbers pass as they are, and so does a `Clean`
text, one that Cauri makes itself from a closed set (an event or route name, a method, a
request id). The access line, written for every request, is made only of such values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from structlog.typing import EventDict, WrappedLogger

from cauri.kit import phone

REDACTED = "[redacted]"


class Clean(str):
    """A text made by Cauri from a closed set, never from what a client or a library says:
    nothing personal or secret can be in it, so it is logged without being searched."""

    __slots__ = ()


# Field names whose value is personal or secret whatever it looks like.
_SENSITIVE_FIELDS = frozenset(
    {
        "authorization",
        "api_key",
        "key",
        "secret",
        "password",
        "token",
        "customer",
        "firstname",
        "lastname",
        "first_name",
        "last_name",
        "email",
        "phone",
        "phone_number",
        "payout_phone",
        "payout_phone_number",
    }
)

_LABELLED_NAME = re.compile(
    r"""(?P<label>(?P<q>['"]?)(?<![\w])(?:first_?name|last_?name|full_?name|customer_name|name|email)"""
    r"""(?P=q)\s*[:=]\s*)(?P<v>'[^']*'|"[^"]*")""",
    re.IGNORECASE,
)


def _labelled_name(match: re.Match[str]) -> str:
    quote = match["v"][0]
    return f"{match['label']}{quote}{REDACTED}{quote}"


def _masked_phone(match: re.Match[str]) -> str:
    return match["plus"] + phone.mask(match["digits"])


# Order matters: a bearer token before the key it is, credentials in URLs before emails
# (`user:pw@host.tld` looks like one). Patterns that start with a run of characters only
# start where such a run does, so that a long run costs one pass, not one per character.
_TEXT_RULES: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=\-]+"), rf"\1{REDACTED}"),
    (re.compile(r"\bsk_(test|live)_[A-Za-z0-9_\-]+"), rf"sk_\1_{REDACTED}"),
    (re.compile(r"whsec_[A-Za-z0-9_\-]+"), f"whsec_{REDACTED}"),
    (
        re.compile(r"(?<![a-zA-Z0-9+.\-])([a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*):[^\s@/]*@"),
        rf"\1:{REDACTED}@",
    ),
    (re.compile(r"(?i)\b(password|passwd|pwd)(\s*[=:]\s*)[^\s,;&'\"]+"), rf"\1\2{REDACTED}"),
    # Credentials in a URL's query (a webhook URL the HTTP client logs): `?token=...`.
    (
        re.compile(r"(?i)([?&][a-z_\-]*(?:token|secret|key|sig|signature|password)=)[^&\s'\"]+"),
        rf"\1{REDACTED}",
    ),
    (
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
        ),
        f"{REDACTED}@{REDACTED}",
    ),
    # PostgreSQL's DETAIL repeats row values (`Failing row contains (...)`, `Key (x)=(...)`).
    (re.compile(r"(DETAIL:\s*).*"), rf"\1{REDACTED}"),
    (_LABELLED_NAME, _labelled_name),
    # Phone numbers (8 to 15 digits, as the API accepts them), not parts of longer tokens
    # (a UUID's groups, a decimal number).
    (
        re.compile(r"(?<![\w.+\-])(?P<plus>\+?)(?P<digits>[0-9]{8,15})(?![\w\-]|\.[0-9])"),
        _masked_phone,
    ),
)


def redact_text(text: str) -> str:
    for pattern, replacement in _TEXT_RULES:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any) -> Any:
    """A copy of `value` fit for a log: texts redacted, sensitive fields blanked, nested
    containers walked; numbers, booleans, None and `Clean` texts kept as they are."""
    if type(value) is Clean or value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {key: _field(key, value_) for key, value_ in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(item) for item in value]
    return redact_text(str(value))


def _field(key: object, value: Any) -> Any:
    if isinstance(key, str) and key.lower() in _SENSITIVE_FIELDS and value is not None:
        return REDACTED
    return redact(value)


def processor(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """structlog processor: the whole event dict, the rendered exception included. Keys
    starting with `_` are structlog's own (`_record`: the stdlib record) and kept."""
    return {
        key: value if key.startswith("_") else _field(key, value)
        for key, value in event_dict.items()
    }
