"""What every console response and form carries: the security headers, the cookies, the CSRF
tokens, and who the client is.

Forms of a session carry its synchronizer token (StaffSession.csrf_token). Forms shown before
any session (sign-in, the one-time link's page) carry a signed double-submit token: a random
nonce in a cookie, and in the form its HMAC under a key derived from CAURI_SECRET_KEY, so
that a cookie planted by someone else (a sibling subdomain) is worth nothing without a form
value that only this server can compute.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request, Response

from cauri.config import Settings
from cauri.kit.ratelimit import budget_key, client_ip, trusted_networks
from cauri.kit.tokens import same
from cauri.staff import totp

PREFIX = "/console"
SESSION_COOKIE = "cauri_console"
FORM_COOKIE = "cauri_console_form"
CSRF_FIELD = "csrf"

# The console needs no script and no resource from elsewhere: its stylesheet and, for the
# TOTP enrollment, a QR code as a data: image. Never framed, never cached, and its addresses
# (a one-time link's token) never sent to another site.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
}


def set_cookie(response: Response, name: str, value: str, max_age: int | None = None) -> None:
    # Secure: browsers treat http://127.0.0.1 and localhost as secure, so it holds in
    # development too. Strict: no other site's page can make a request that carries it.
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=PREFIX,
        secure=True,
        httponly=True,
        samesite="strict",
    )


def clear_cookie(response: Response, name: str) -> None:
    response.delete_cookie(name, path=PREFIX, secure=True, httponly=True, samesite="strict")


def _form_key(settings: Settings) -> bytes:
    secret_key = totp.required_key(settings.secret_key)
    return hashlib.sha256(b"cauri console form tokens\x00" + secret_key.encode()).digest()


def form_token(settings: Settings, nonce: str) -> str:
    return hmac.new(_form_key(settings), nonce.encode(), hashlib.sha256).hexdigest()


def form_nonce(request: Request) -> str:
    """The browser's nonce if it has one (several tabs share it), else a new one."""
    return request.cookies.get(FORM_COOKIE) or secrets.token_urlsafe(32)


def form_token_valid(request: Request, settings: Settings, sent: str | None) -> bool:
    nonce = request.cookies.get(FORM_COOKIE)
    return nonce is not None and same(sent, form_token(settings, nonce))


def client_address(request: Request, settings: Settings) -> str:
    """Who the throttle counts: the client's address (an IPv6 client's /64), read like the
    rate limit reads it (X-Forwarded-For only from CAURI_TRUSTED_PROXIES)."""
    forwarded = ",".join(request.headers.getlist("x-forwarded-for")) or None
    peer = request.client.host if request.client else None
    return budget_key(client_ip(peer, forwarded, trusted_networks(settings.trusted_proxies)))
