"""A front door: a realm's pages under one address, with cookies of their own, and what
every response and form behind it carries (security headers, CSRF tokens).

Forms of a session carry its synchronizer token (UserSession.csrf_token). Forms shown before
any session (sign-in, the one-time link's page) carry a signed double-submit token: a random
nonce in a cookie, and in the form its HMAC under a key derived from CAURI_SECRET_KEY and the
door's name, so that a cookie planted by someone else (a sibling subdomain) is worth nothing
without a form value that only this server can compute, and a token of one door is worth
nothing at the other.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path

from fastapi import Request, Response

from cauri.config import Settings
from cauri.kit.public_url import public_base_url
from cauri.kit.ratelimit import budget_key, client_ip, trusted_networks
from cauri.kit.tokens import same
from cauri.people import totp
from cauri.people.realm import Realm

CSRF_FIELD = "csrf"

# The pages' one stylesheet, served by each door under its prefix.
STYLESHEET = (Path(__file__).parent / "static" / "pages.css").read_bytes()

# The pages need no script and no resource from elsewhere: their stylesheet and, for the
# TOTP enrollment, a QR code as a data: image. Never framed, never cached, and their
# addresses (a one-time link's token) never sent to another site.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True)
class Door:
    realm: Realm
    prefix: str
    # Names the cookies and the form key: `cauri_<name>`.
    name: str
    # The template the sign-in pages extend, and how a refusal names the pages
    # ("ne vient pas de <where>").
    layout: str
    where: str

    @property
    def session_cookie(self) -> str:
        return f"cauri_{self.name}"

    @property
    def form_cookie(self) -> str:
        return f"cauri_{self.name}_form"

    @property
    def home_path(self) -> str:
        return f"{self.prefix}/"

    @property
    def sign_in_path(self) -> str:
        return f"{self.prefix}/sign-in"

    @property
    def welcome_path(self) -> str:
        return f"{self.prefix}/welcome/"

    def welcome_link(self, request: Request, settings: Settings, token: str) -> str:
        """A one-time link's address: on CAURI_PUBLIC_URL, or the loopback address the server
        listens on; never the Host header (a client chooses it). Neither: the path alone."""
        base = public_base_url(settings, request.scope.get("server")) or ""
        return f"{base}{self.welcome_path}{token}"

    def set_cookie(
        self, response: Response, name: str, value: str, max_age: int | None = None
    ) -> None:
        # Secure: browsers treat http://127.0.0.1 and localhost as secure, so it holds in
        # development too. Strict: no other site's page can make a request that carries it.
        # The path keeps each door's cookies away from the other door's pages.
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path=self.prefix,
            secure=True,
            httponly=True,
            samesite="strict",
        )

    def clear_cookie(self, response: Response, name: str) -> None:
        response.delete_cookie(
            name, path=self.prefix, secure=True, httponly=True, samesite="strict"
        )

    def _form_key(self, settings: Settings) -> bytes:
        secret_key = totp.required_key(settings.secret_key)
        label = f"cauri {self.name} form tokens\x00".encode()
        return hashlib.sha256(label + secret_key.encode()).digest()

    def form_token(self, settings: Settings, nonce: str) -> str:
        return hmac.new(self._form_key(settings), nonce.encode(), hashlib.sha256).hexdigest()

    def form_nonce(self, request: Request) -> str:
        """The browser's nonce if it has one (several tabs share it), else a new one."""
        return request.cookies.get(self.form_cookie) or secrets.token_urlsafe(32)

    def form_token_valid(self, request: Request, settings: Settings, sent: str | None) -> bool:
        nonce = request.cookies.get(self.form_cookie)
        return nonce is not None and same(sent, self.form_token(settings, nonce))


def client_address(request: Request, settings: Settings) -> str:
    """Who the throttle counts: the client's address (an IPv6 client's /64), read like the
    rate limit reads it (X-Forwarded-For only from CAURI_TRUSTED_PROXIES)."""
    forwarded = ",".join(request.headers.getlist("x-forwarded-for")) or None
    peer = request.client.host if request.client else None
    return budget_key(client_ip(peer, forwarded, trusted_networks(settings.trusted_proxies)))
