from __future__ import annotations

from cauri.kit.errors import CauriError


class ConnectorError(CauriError):
    """A connector account that cannot be added, routed or built: a wrong kind, setting or
    secret, a missing or wrong CAURI_SECRET_KEY. The CLI prints it and exits 1; the payment
    path treats a connector it cannot build as unrouted (and logs why)."""

    code, http_status = "connector_error", 422
    default_message = "Le connecteur est mal configuré."
