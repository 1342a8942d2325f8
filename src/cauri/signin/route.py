"""How a page behind a door answers: a unit of work whose refusals are pages of the door
(a missing session: its sign-in page) and whose every response carries the security
headers."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse

from cauri.http import UnitOfWorkRoute
from cauri.kit.error_handlers import log_crash
from cauri.kit.errors import CauriError, ServerError
from cauri.kit.validation_messages import validation_error
from cauri.signin.door import SECURITY_HEADERS, Door
from cauri.signin.errors import SignInRequired

CRASHED = (
    "Une erreur interne est survenue : rien n'a été enregistré. Réessayez ; si elle revient, "
    "signalez-la avec l'heure."
)

Render = Callable[[Request, str, dict[str, Any], int], Response]

ERROR_TITLES = {
    401: "Connexion requise",
    403: "Action refusée",
    404: "Page introuvable",
    422: "Demande invalide",
    429: "Trop de tentatives",
    500: "Erreur interne",
    503: "Service à configurer",
}


def redirect(path: str) -> Response:
    """After a form: the browser GETs `path` (303), so that a reload posts nothing again."""
    return RedirectResponse(path, status_code=303)


def error_page(render: Render, request: Request, error: CauriError) -> Response:
    """A refusal as a page of the door `render` draws (cauri/signin/templates/signin/)."""
    context = {
        "title": ERROR_TITLES.get(error.http_status, "Une erreur est survenue"),
        "message": error.message,
        "status": error.http_status,
    }
    response = render(request, "signin/error.html", context, error.http_status)
    response.headers.update(error.headers)
    return response


def page_route(door: Door, render: Render) -> type[UnitOfWorkRoute]:
    """The route class of `door`'s pages, refusals drawn by `render`."""

    class PageRoute(UnitOfWorkRoute):
        # Browsers arrive with whatever links add; forms are read field by field.
        strict_input = False

        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()

            async def handle(request: Request) -> Response:
                try:
                    response = await handler(request)
                except SignInRequired:
                    response = redirect(door.sign_in_path)
                    door.clear_cookie(response, door.session_cookie)
                except CauriError as error:
                    response = error_page(render, request, error)
                except RequestValidationError as invalid:
                    response = error_page(render, request, validation_error(invalid))
                except Exception as crash:
                    # A person gets a page, not the API's envelope (the unit of work has
                    # rolled back); the crash is logged whole, as the API's are.
                    log_crash(request.url.path, crash)
                    response = error_page(render, request, ServerError(CRASHED))
                response.headers.update(SECURITY_HEADERS)
                return response

            return handle

    return PageRoute
