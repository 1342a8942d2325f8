"""pawaPay's signed callbacks: RFC 9421 message signatures over the request, with the body
bound by `Content-Digest`, verified against the public keys pawaPay publishes
(`GET /v2/public-key/http`). Sources in docs/OPERATORS.md, "pawaPay"."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

import http_sf
import httpx
from cryptography.exceptions import InvalidSignature as InvalidCryptographicSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from http_message_signatures import (
    HTTPMessageSignaturesException,
    HTTPMessageVerifier,
    MappingKeyResolver,
    algorithms,
)

from cauri.operators.protocol import Notice


class _DerTolerantEcdsaP256(algorithms.ECDSA_P256_SHA256):
    """RFC 9421 encodes an ECDSA signature as r and s side by side; pawaPay's signer (a
    Java `SHA256withECDSA`, its published example) produces the DER encoding. Both are read."""

    def verify(self, signature: bytes, message: bytes) -> None:
        if len(signature) == 2 * self._coordinate_size:
            super().verify(signature, message)
            return
        self.public_key.verify(signature, message, ec.ECDSA(hashes.SHA256()))


class _DerTolerantEcdsaP384(algorithms.ECDSA_P384_SHA384):
    def verify(self, signature: bytes, message: bytes) -> None:
        if len(signature) == 2 * self._coordinate_size:
            super().verify(signature, message)
            return
        self.public_key.verify(signature, message, ec.ECDSA(hashes.SHA384()))


# The algorithms RFC 9421 names that pawaPay may sign with (its docs: ECDSA and RSA keys).
ALGORITHMS: dict[str, type[algorithms.HTTPSignatureAlgorithm]] = {
    algorithm.algorithm_id: algorithm
    for algorithm in (
        _DerTolerantEcdsaP256,
        _DerTolerantEcdsaP384,
        algorithms.RSA_PSS_SHA512,
        algorithms.RSA_V1_5_SHA256,
        algorithms.ED25519,
    )
}
# A callback is applied once: a replayed one changes nothing. The bound keeps a captured
# signature from being replayed for ever against a reused reference.
MAX_AGE = datetime.timedelta(days=1)


@dataclass(frozen=True)
class SignatureInput:
    label: str
    keyid: str
    alg: str | None


@dataclass
class _Message:
    """What the verifier reads of a request."""

    method: str
    url: str
    headers: httpx.Headers


def signature_input(notice: Notice) -> SignatureInput | None:
    """The signature's key and algorithm, as `Signature-Input` names them; None when the
    notice carries no readable signature."""
    value = notice.headers.get("signature-input")
    if not value:
        return None
    try:
        parsed: Any = http_sf.parse(value.encode("ascii"), tltype="dictionary")
    except (ValueError, UnicodeEncodeError):
        return None
    if not isinstance(parsed, dict) or len(parsed) != 1:
        return None
    ((label, member),) = parsed.items()
    params = member[1] if isinstance(member, tuple) and len(member) == 2 else {}
    keyid, alg = params.get("keyid"), params.get("alg")
    if not isinstance(keyid, str):
        return None
    return SignatureInput(label, keyid, alg if isinstance(alg, str) else None)


def verified(notice: Notice, keys: dict[str, str], signed: SignatureInput) -> bool:
    """Whether the notice is signed by pawaPay's key `signed.keyid` (one of `keys`, PEM by
    id), covers its body through a matching `Content-Digest`, and is recent."""
    pem = keys.get(signed.keyid)
    if pem is None:
        return False
    candidates = [ALGORITHMS[signed.alg]] if signed.alg in ALGORITHMS else ALGORITHMS.values()
    message = _Message(
        notice.method.upper(), notice.url, httpx.Headers(list(notice.headers.items()))
    )
    resolver = MappingKeyResolver(public_keys={signed.keyid: pem.encode()}, private_keys={})
    for algorithm in candidates:
        verifier = HTTPMessageVerifier(signature_algorithm=algorithm, key_resolver=resolver)
        try:
            verifier.verify(
                message,
                max_age=MAX_AGE,
                body=notice.body,
                require_components=("content-digest",),
            )
        except (HTTPMessageSignaturesException, InvalidCryptographicSignature, ValueError):
            continue
        return True
    return False


def public_keys(answer_body: Any) -> dict[str, str]:
    """`GET /v2/public-key/http`: a list of `{id, key}` (the key in PEM)."""
    keys: dict[str, str] = {}
    if isinstance(answer_body, list):
        for entry in answer_body:
            if isinstance(entry, dict):
                key_id, key = entry.get("id"), entry.get("key")
                if isinstance(key_id, str) and isinstance(key, str):
                    keys[key_id] = key
    return keys
