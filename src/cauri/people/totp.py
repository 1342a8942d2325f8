"""Time-based one-time passwords (RFC 6238): six digits, 30-second steps, a code of the step
before or after accepted (clocks drift), and none accepted twice: a code is taken only for a
step later than the last one taken, so a code seen over a shoulder is worth nothing once used.

The secret is stored encrypted with CAURI_SECRET_KEY by the connectors' SecretBox, under the
account's id (a blob moved to another account does not decrypt).
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pyotp

from cauri.config import SECRET_KEY_MIN_LENGTH
from cauri.connectors.errors import ConnectorError
from cauri.connectors.secrets import SecretBox
from cauri.kit.errors import ServerError

STEP_SECONDS = 30
TOLERANCE_STEPS = 1
ISSUER = "Cauri"

MISSING_KEY = (
    "CAURI_SECRET_KEY n'est pas défini : la connexion en a besoin (il chiffre les secrets "
    "TOTP et signe le formulaire de connexion). Définissez-le "
    f"({SECRET_KEY_MIN_LENGTH} caractères ou plus, par exemple la sortie de "
    "`openssl rand -hex 32`, le même pour la CLI et les serveurs), puis redémarrez le service."
)
UNREADABLE = (
    "Le secret TOTP de ce compte ne se déchiffre pas avec ce CAURI_SECRET_KEY (la clé a "
    "changé) : demandez un nouveau lien de connexion (`cauri staff link EMAIL`)."
)


class SecretKeyMissing(ServerError):
    """The service was started without the key its sign-in needs: unavailable until it is
    set and the service restarted (503), not an incident of the request (issue 27)."""

    http_status = 503
    default_message = MISSING_KEY


@dataclass(frozen=True)
class Enrollment:
    """What the person copies into an authenticator application."""

    secret: str
    uri: str  # otpauth://totp/…

    @property
    def grouped(self) -> str:
        """The secret in groups of four, easier to type."""
        return " ".join(self.secret[i : i + 4] for i in range(0, len(self.secret), 4))


def new_secret() -> str:
    return pyotp.random_base32()


def enrollment(secret: str, email: str) -> Enrollment:
    uri = pyotp.TOTP(secret).provisioning_uri(name=email, issuer_name=ISSUER)
    return Enrollment(secret, uri)


def step_of(now: datetime) -> int:
    return int(now.timestamp()) // STEP_SECONDS


def code_at(secret: str, step: int) -> str:
    return pyotp.TOTP(secret).generate_otp(step)


def accepted_step(secret: str, code: str, now: datetime, last_step: int | None) -> int | None:
    """The step whose code `code` is, if it is one of the steps around `now` and later than
    `last_step`; None otherwise (wrong, too old, or already used)."""
    code = code.replace(" ", "")
    if not (code.isascii() and code.isdigit()):
        return None
    current = step_of(now)
    for step in range(current - TOLERANCE_STEPS, current + TOLERANCE_STEPS + 1):
        if last_step is not None and step <= last_step:
            continue
        if hmac.compare_digest(code_at(secret, step), code):
            return step
    return None


def required_key(secret_key: str | None) -> str:
    if secret_key is None:
        raise SecretKeyMissing()
    return secret_key


def _box(secret_key: str | None, previous_keys: Sequence[str] = ()) -> SecretBox:
    return SecretBox(required_key(secret_key), previous_keys)


def label(account_id: uuid.UUID) -> str:
    """What binds a sealed TOTP secret to its account (`cauri secrets rotate` reseals it)."""
    return f"staff-totp:{account_id}"


def seal(secret_key: str | None, account_id: uuid.UUID, secret: str) -> bytes:
    return _box(secret_key).encrypt(label(account_id), {"totp": secret})


def unseal(
    secret_key: str | None,
    account_id: uuid.UUID,
    blob: bytes,
    previous_keys: Sequence[str] = (),
) -> str:
    try:
        return _box(secret_key, previous_keys).decrypt(label(account_id), blob)["totp"]
    except ConnectorError:
        raise ServerError(UNREADABLE) from None
