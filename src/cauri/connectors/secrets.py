"""Secrets at rest (a connector account's credentials, a webhook endpoint's signing secret, a
staff member's TOTP secret), each encrypted as one blob.

AES-256-GCM (authenticated: a changed blob, or a blob moved to another owner, is refused),
with a key derived by HKDF-SHA256 from CAURI_SECRET_KEY under a fixed label. The blob is a
version byte, a random 96-bit nonce and the ciphertext of the secrets as JSON; the owner's
label (the account's name…) is the associated data.

A keyring: CAURI_SECRET_KEY encrypts, and it or any of CAURI_PREVIOUS_SECRET_KEYS decrypts
(each is tried, newest first: the authentication tag says which one made a blob), so the key
can be replaced while servers run; `cauri secrets rotate` then re-encrypts every blob with
the new key (`reseal`). A blob none of them opens fails with a clear error, never garbage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from cauri.config import SECRET_KEY_MIN_LENGTH, Settings
from cauri.connectors.errors import ConnectorError

VERSION = b"\x01"
_NONCE_BYTES = 12
_SALT = b"cauri/connectors"
_INFO = b"cauri connector secrets v1 (AES-256-GCM)"

MISSING_KEY = (
    "CAURI_SECRET_KEY n'est pas défini : il chiffre les secrets des connecteurs et des "
    "webhooks, et il est requis dès qu'un connecteur ou un marchand existe "
    f"({SECRET_KEY_MIN_LENGTH} caractères ou plus, par exemple la sortie de "
    "`openssl rand -hex 32`), le même pour la CLI, les serveurs et les workers."
)


class SecretBox:
    """Encrypts with CAURI_SECRET_KEY; decrypts with it or one of the previous keys."""

    def __init__(self, secret_key: str | None, previous_keys: Sequence[str] = ()) -> None:
        if secret_key is None:
            raise ConnectorError(MISSING_KEY)
        if len(secret_key) < SECRET_KEY_MIN_LENGTH:
            raise ConnectorError(
                f"CAURI_SECRET_KEY est trop court : {SECRET_KEY_MIN_LENGTH} caractères au moins."
            )
        self._aeads = [_aead(key) for key in (secret_key, *previous_keys)]

    def encrypt(self, account: str, secrets: Mapping[str, str]) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps(dict(secrets), sort_keys=True).encode()
        return VERSION + nonce + self._aeads[0].encrypt(nonce, plain, account.encode())

    def decrypt(self, account: str, blob: bytes) -> dict[str, str]:
        return self._open(account, blob)[0]

    def reseal(self, account: str, blob: bytes) -> bytes | None:
        """The blob encrypted again with CAURI_SECRET_KEY; None when it already is."""
        secrets, newest = self._open(account, blob)
        return None if newest else self.encrypt(account, secrets)

    def _open(self, account: str, blob: bytes) -> tuple[dict[str, str], bool]:
        """The secrets, and whether CAURI_SECRET_KEY itself opened them."""
        if blob[:1] != VERSION or len(blob) < 1 + _NONCE_BYTES + 16:
            raise ConnectorError(
                f"Les secrets du connecteur {account} sont illisibles (format inconnu) : "
                "enregistrez-les de nouveau avec `cauri connectors add`."
            )
        nonce, sealed = blob[1 : 1 + _NONCE_BYTES], blob[1 + _NONCE_BYTES :]
        for position, aead in enumerate(self._aeads):
            try:
                plain = aead.decrypt(nonce, sealed, account.encode())
            except InvalidTag:
                continue
            secrets: dict[str, str] = json.loads(plain)
            return secrets, position == 0
        raise ConnectorError(
            f"Les secrets du connecteur {account} ne se déchiffrent ni avec ce "
            "CAURI_SECRET_KEY ni avec CAURI_PREVIOUS_SECRET_KEYS : la clé a changé depuis leur "
            "enregistrement (ou ils ont été modifiés). Remettez l'ancienne clé dans "
            "CAURI_PREVIOUS_SECRET_KEYS, ou enregistrez de nouveau le connecteur avec "
            "`cauri connectors add`."
        )


def keyring(settings: Settings) -> SecretBox:
    """The deployment's keyring: CAURI_SECRET_KEY, then CAURI_PREVIOUS_SECRET_KEYS (its keys
    derived once per process, not at each webhook attempt)."""
    return _keyring(settings.secret_key, settings.previous_keys)


def sealing_keyring(settings: Settings) -> SecretBox | None:
    """The keyring that seals what is written now; None without CAURI_SECRET_KEY (a
    development service on loopback: serving off loopback requires the key)."""
    return None if settings.secret_key is None else keyring(settings)


@lru_cache(maxsize=4)
def _keyring(secret_key: str | None, previous_keys: tuple[str, ...]) -> SecretBox:
    return SecretBox(secret_key, previous_keys)


def _aead(secret_key: str) -> AESGCM:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(
        secret_key.encode()
    )
    return AESGCM(derived)
