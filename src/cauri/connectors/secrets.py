"""A connector account's secrets, encrypted at rest as one blob.

AES-256-GCM (authenticated: a changed blob, or a blob moved to another account, is refused),
with a key derived by HKDF-SHA256 from CAURI_SECRET_KEY under a fixed label. The blob is a
version byte, a random 96-bit nonce and the ciphertext of the secrets as JSON; the account's
name is the associated data. Decrypting with another key (a rotated CAURI_SECRET_KEY) fails
with a clear error, never with garbage.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from cauri.config import SECRET_KEY_MIN_LENGTH
from cauri.connectors.errors import ConnectorError

VERSION = b"\x01"
_NONCE_BYTES = 12
_SALT = b"cauri/connectors"
_INFO = b"cauri connector secrets v1 (AES-256-GCM)"

MISSING_KEY = (
    "CAURI_SECRET_KEY n'est pas défini : il chiffre les secrets des connecteurs et il est "
    f"requis dès qu'un connecteur existe ({SECRET_KEY_MIN_LENGTH} caractères ou plus, par "
    "exemple la sortie de `openssl rand -hex 32`), le même pour la CLI, les serveurs et les "
    "workers."
)


class SecretBox:
    """Encrypts and decrypts secrets blobs with one CAURI_SECRET_KEY."""

    def __init__(self, secret_key: str | None) -> None:
        if secret_key is None:
            raise ConnectorError(MISSING_KEY)
        if len(secret_key) < SECRET_KEY_MIN_LENGTH:
            raise ConnectorError(
                f"CAURI_SECRET_KEY est trop court : {SECRET_KEY_MIN_LENGTH} caractères au moins."
            )
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=_INFO).derive(
            secret_key.encode()
        )
        self._aead = AESGCM(derived)

    def encrypt(self, account: str, secrets: Mapping[str, str]) -> bytes:
        nonce = os.urandom(_NONCE_BYTES)
        plain = json.dumps(dict(secrets), sort_keys=True).encode()
        return VERSION + nonce + self._aead.encrypt(nonce, plain, account.encode())

    def decrypt(self, account: str, blob: bytes) -> dict[str, str]:
        if blob[:1] != VERSION or len(blob) < 1 + _NONCE_BYTES + 16:
            raise ConnectorError(
                f"Les secrets du connecteur {account} sont illisibles (format inconnu) : "
                "enregistrez-les de nouveau avec `cauri connectors add`."
            )
        nonce, sealed = blob[1 : 1 + _NONCE_BYTES], blob[1 + _NONCE_BYTES :]
        try:
            plain = self._aead.decrypt(nonce, sealed, account.encode())
        except InvalidTag:
            raise ConnectorError(
                f"Les secrets du connecteur {account} ne se déchiffrent pas avec ce "
                "CAURI_SECRET_KEY : la clé a changé depuis leur enregistrement (ou ils ont été "
                "modifiés). Remettez l'ancienne clé, ou enregistrez de nouveau le connecteur "
                "avec `cauri connectors add`."
            ) from None
        secrets: dict[str, str] = json.loads(plain)
        return secrets
