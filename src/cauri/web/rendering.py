"""How the hosted page speaks to a customer: HTML in French, errors included.

The API answers errors with the JSON envelope; a customer's browser on `/pay/...` gets an
HTML page with the same status code instead, since nobody there reads JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.templating import Jinja2Templates

from cauri.http import UnitOfWorkRoute
from cauri.kit.error_handlers import log_crash
from cauri.kit.errors import CauriError, ServerError
from cauri.kit.money import format_amount as format_amount
from cauri.kit.validation_messages import validation_error
from cauri.models import Merchant
from cauri.web.language import language_of, translator

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")

# A framed payment page can be overlaid to trick a click (clickjacking); the page needs no
# image and no resource from elsewhere, and no script but the checkout page's own file (no
# inline script: one injected into the page would not run). No `form-action`: Chromium applies it to
# the redirect that follows the form, and that redirect goes to the merchant's return_url.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}

ERROR_TITLES = {
    404: "Paiement introuvable",
    409: "Paiement déjà traité",
    422: "Demande invalide",
    500: "Erreur interne",
}
CRASHED = (
    "Une erreur interne est survenue ; rien n'a été enregistré. Réessayez dans un instant : "
    "si vous avez validé un paiement sur votre téléphone, il n'est pas perdu."
)


def merchant_shown(merchant: Merchant | None) -> dict[str, Any]:
    """Who is paid, as every customer's page shows it: the merchant's name, its logo (the
    address changes with it, so that a browser's copy of the old one is not shown) and its
    support email."""
    if merchant is None:
        return {"merchant_name": "", "merchant_logo": None, "support_email": None}
    stamp = merchant.logo_updated_at
    return {
        "merchant_name": merchant.name,
        "merchant_logo": None
        if stamp is None
        else f"/logos/{merchant.id}.png?v={int(stamp.timestamp())}",
        "support_email": merchant.support_email,
    }


def page(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    """`name` rendered in the customer's language (`lang`, and `t` for its sentences)."""
    language = language_of(request)
    shown = context | {"lang": language, "t": translator(language)}
    headers = SECURITY_HEADERS | {"Content-Language": language, "Vary": "Accept-Language"}
    return templates.TemplateResponse(
        request, name, shown, status_code=status_code, headers=headers
    )


def error_page(request: Request, error: CauriError) -> Response:
    title = ERROR_TITLES.get(error.http_status, "Une erreur est survenue")
    context = {"title": title, "message": error.message}
    return page(request, "error.html", context, status_code=error.http_status)


class PageRoute(UnitOfWorkRoute):
    """A unit of work whose errors are rendered as HTML pages. The unit of work has already
    rolled back (or kept a recorded fact) when the error reaches this wrapper."""

    # Customers' browsers arrive with what links and operators' pages add (utm_source…).
    strict_input = False

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except CauriError as error:
                return error_page(request, error)
            except RequestValidationError as invalid:
                return error_page(request, validation_error(invalid))
            except Exception as crash:
                # A customer gets a page, not the API's envelope (the unit of work has rolled
                # back); the crash is logged whole, as the API's are.
                log_crash(request.url.path, crash)
                return error_page(request, ServerError(CRASHED))

        return handle
