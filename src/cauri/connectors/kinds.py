"""The connector kinds Cauri knows, by name, and the rules a connector account must follow.

The names of each kind's settings and secrets are part of the operator-facing contract
(DESIGN: connector kinds). Tests may add a test-only kind to KINDS.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from cauri.connectors.errors import ConnectorError
from cauri.operators import cinetpay, mtn_momo, orange_money, pawapay, wave
from cauri.operators.config import ENVIRONMENTS, ConnectorKind

KINDS: dict[str, ConnectorKind] = {
    kind.name: kind
    for kind in (mtn_momo.KIND, pawapay.KIND, wave.KIND, orange_money.KIND, cinetpay.KIND)
}


def kind_named(name: str, kinds: Mapping[str, ConnectorKind] | None = None) -> ConnectorKind:
    table = KINDS if kinds is None else kinds
    kind = table.get(name)
    if kind is None:
        known = ", ".join(sorted(table)) or "aucun"
        raise ConnectorError(f"Type de connecteur inconnu : {name} (connus : {known}).")
    return kind


def _names(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names) if names else "aucun"


def _loopback(host: str) -> bool:
    """This machine itself: plain http to it never crosses a network (the operators'
    contract fakes and local tunnels; no operator's production API is served there)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def validate_account(
    kind: ConnectorKind,
    environment: str,
    base_url: str,
    settings: Mapping[str, str],
    secrets: Mapping[str, str],
) -> None:
    """Raises ConnectorError, in plain words, for anything the kind would not accept."""
    if environment not in ENVIRONMENTS:
        raise ConnectorError(f"Environnement inconnu : {environment} (sandbox ou production).")
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConnectorError(
            f"URL de base invalide : {base_url} (une URL http:// ou https://, par exemple "
            "https://sandbox.momodeveloper.mtn.com)."
        )
    if environment == "production" and parts.scheme != "https" and not _loopback(parts.hostname):
        raise ConnectorError(
            f"URL de base refusée pour la production : {base_url} (https:// obligatoire : les "
            "identifiants et l'argent ne passent jamais en clair sur le réseau)."
        )
    allowed = (*kind.settings, *kind.optional_settings)
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise ConnectorError(
            f"Réglage inconnu du type {kind.name} : {_names(unknown)} "
            f"(réglages : {_names(allowed)})."
        )
    required = [s for s in kind.settings if s not in kind.optional_settings]
    missing = [s for s in required if not settings.get(s)]
    if missing:
        raise ConnectorError(
            f"Réglage manquant pour le type {kind.name} : {_names(missing)} (--setting NOM=VALEUR)."
        )
    known = (*kind.secrets, *kind.optional_secrets)
    unknown = sorted(set(secrets) - set(known))
    if unknown:
        raise ConnectorError(
            f"Secret inconnu du type {kind.name} : {_names(unknown)} (secrets : {_names(known)})."
        )
    if kind.check_settings is not None:
        try:
            kind.check_settings(settings)
        except ValueError as error:
            raise ConnectorError(str(error)) from error
    missing = [s for s in kind.secrets if not secrets.get(s)]
    if missing:
        raise ConnectorError(
            f"Secret manquant pour le type {kind.name} : {_names(missing)} (--secret NOM=@FICHIER)."
        )
