"""Who is asking, behind a door: the session of the request's cookie, the CSRF token every
form of a session posts, and the sign-in step a page needs. Each is a FastAPI dependency
made for one door."""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations at
# runtime, and they name values local to the functions that make them.

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request

from cauri.http import RuntimeDep, SessionDep
from cauri.kit.tokens import same
from cauri.people import sessions
from cauri.people.sessions import Current
from cauri.signin.door import CSRF_FIELD, Door
from cauri.signin.errors import CsrfRefused, SignInRequired

SessionOf = Callable[..., Awaitable[Current | None]]


def current_session(door: Door) -> SessionOf:
    """The dependency giving the request's live session of `door`'s realm, whatever step it
    is at; None without one."""

    async def current(request: Request, session: SessionDep, runtime: RuntimeDep) -> Current | None:
        token = request.cookies.get(door.session_cookie)
        return await sessions.find(
            session, door.realm, token, runtime.clock.now(), runtime.settings
        )

    return current


def signed_in(door: Door) -> Callable[..., Awaitable[Current]]:
    """The dependency of a page: a session past every step of the sign-in."""
    current_dep: Any = Depends(current_session(door))

    async def opened(current: Annotated[Current | None, current_dep]) -> Current:
        if current is None or current.session.pending is not None:
            raise SignInRequired()
        return current

    return opened


def pending(door: Door, step: str) -> Callable[..., Awaitable[Current]]:
    """The dependency of a sign-in step's page: a session owing `step`."""
    current_dep: Any = Depends(current_session(door))

    async def owing(current: Annotated[Current | None, current_dep]) -> Current:
        if current is None or current.session.pending != step:
            raise SignInRequired()
        return current

    return owing


def checked_csrf(door: Door) -> Callable[..., Awaitable[None]]:
    """The dependency of a form of a session: refused (403, nothing written) unless its
    token is the session's."""
    current_dep: Any = Depends(current_session(door))

    async def checked(request: Request, current: Annotated[Current | None, current_dep]) -> None:
        if current is None:
            raise SignInRequired()
        sent = (await request.form()).get(CSRF_FIELD)
        if not same(sent if isinstance(sent, str) else None, current.session.csrf_token):
            raise CsrfRefused(door.where)

    return checked


def form_checked(door: Door) -> Callable[..., Awaitable[None]]:
    """The dependency of a form shown before any session: its signed double-submit token."""

    async def checked(request: Request, runtime: RuntimeDep) -> None:
        sent = (await request.form()).get(CSRF_FIELD)
        if not door.form_token_valid(
            request, runtime.settings, sent if isinstance(sent, str) else None
        ):
            raise CsrfRefused(door.where)

    return checked
