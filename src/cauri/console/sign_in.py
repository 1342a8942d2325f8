"""Signing in and out: the sign-in form, the TOTP code, the TOTP enrollment, the one-time
link's page (a new password), sign-out. Pages without a session: every other console page
needs one (cauri.console.pages)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

import segno
from fastapi import Depends, Form, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.console.auth import CurrentDep, checked_csrf, pending
from cauri.console.errors import CsrfRefused
from cauri.console.pages import Pages
from cauri.console.rendering import SIGN_IN_PATH, redirect, render
from cauri.console.security import (
    FORM_COOKIE,
    PREFIX,
    SESSION_COOKIE,
    clear_cookie,
    client_address,
    form_nonce,
    form_token,
    form_token_valid,
    set_cookie,
)
from cauri.http import RuntimeDep, SessionDep
from cauri.kit.errors import InvalidRequest
from cauri.runtime import Runtime
from cauri.staff import accounts, sessions
from cauri.staff import sign_in as signing
from cauri.staff.sessions import Current, Opened

pages = Pages()
router = pages.router

HOME_PATH = f"{PREFIX}/"
CODE_PATH = f"{PREFIX}/sign-in/code"
ENROLL_PATH = f"{PREFIX}/two-factor"
WELCOME_PATH = f"{PREFIX}/welcome/"
STEP_PATHS = {None: HOME_PATH, signing.TOTP: CODE_PATH, signing.ENROLL: ENROLL_PATH}

TotpStep = Annotated[Current, Depends(pending(signing.TOTP))]
EnrollStep = Annotated[Current, Depends(pending(signing.ENROLL))]


def _with_form_token(
    request: Request,
    runtime: Runtime,
    name: str,
    context: dict[str, Any],
    status_code: int = 200,
) -> Response:
    """A form shown before any session, with its signed double-submit token."""
    nonce = form_nonce(request)
    context = context | {"csrf": form_token(runtime.settings, nonce)}
    response = render(request, name, context, status_code)
    set_cookie(response, FORM_COOKIE, nonce)
    return response


async def _form_checked(request: Request, runtime: RuntimeDep) -> None:
    sent = (await request.form()).get("csrf")
    if not form_token_valid(request, runtime.settings, sent if isinstance(sent, str) else None):
        raise CsrfRefused()


FormChecked = Depends(_form_checked)


def _to_step(opened: Opened, runtime: Runtime) -> Response:
    """To the next step of the sign-in, with the new session's cookie."""
    response = redirect(STEP_PATHS[opened.session.pending])
    max_age = int(sessions.lifetime(runtime.settings).total_seconds())
    set_cookie(response, SESSION_COOKIE, opened.token, max_age=max_age)
    clear_cookie(response, FORM_COOKIE)
    return response


def _sign_in_page(
    request: Request, runtime: Runtime, email: str = "", error: str | None = None
) -> Response:
    context = {"email": email, "error": error}
    return _with_form_token(
        request, runtime, "console/sign_in.html", context, 401 if error else 200
    )


@router.get("/sign-in")
async def sign_in_form(request: Request, current: CurrentDep, runtime: RuntimeDep) -> Response:
    if current is not None:
        return redirect(STEP_PATHS[current.session.pending])
    return _sign_in_page(request, runtime)


@router.post("/sign-in", dependencies=[FormChecked])
async def sign_in(
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    # Empty is a wrong answer like any other (browsers refuse it before sending anyway).
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
) -> Response:
    ip = client_address(request, runtime.settings)
    now = runtime.clock.now()
    try:
        opened = await signing.with_password(session, email, password, ip, now, runtime.settings)
    except signing.WrongCredentials as wrong:
        return _sign_in_page(request, runtime, email, wrong.message)
    return _to_step(opened, runtime)


async def _with_code(
    request: Request,
    session: AsyncSession,
    runtime: Runtime,
    current: Current,
    code: str,
    page: Callable[[str], Response],
) -> Response:
    """The TOTP step passed, or its `page` again saying why not."""
    ip = client_address(request, runtime.settings)
    now = runtime.clock.now()
    try:
        opened = await signing.with_code(session, current, code, ip, now, runtime.settings)
    except signing.WrongCode as wrong:
        return page(wrong.message)
    return _to_step(opened, runtime)


def _code_page(request: Request, current: Current, error: str | None = None) -> Response:
    context = {"csrf": current.session.csrf_token, "error": error}
    return render(request, "console/code.html", context, 401 if error else 200)


@router.get("/sign-in/code")
async def code_form(request: Request, current: TotpStep) -> Response:
    return _code_page(request, current)


@router.post("/sign-in/code", dependencies=[Depends(checked_csrf)])
async def code(
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    current: TotpStep,
    code: Annotated[str, Form()],
) -> Response:
    return await _with_code(
        request, session, runtime, current, code, partial(_code_page, request, current)
    )


def _enrollment_page(
    request: Request, runtime: Runtime, current: Current, error: str | None = None
) -> Response:
    enrollment = signing.enrollment(current.account, runtime.settings)
    qr = segno.make(enrollment.uri, error="m").svg_data_uri(scale=5, border=2)
    context = {
        "csrf": current.session.csrf_token,
        "enrollment": enrollment,
        "qr": qr,
        "email": current.account.email,
        "error": error,
    }
    return render(request, "console/enroll.html", context, 401 if error else 200)


@router.get("/two-factor")
async def enroll_form(request: Request, runtime: RuntimeDep, current: EnrollStep) -> Response:
    return _enrollment_page(request, runtime, current)


@router.post("/two-factor", dependencies=[Depends(checked_csrf)])
async def enroll(
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    current: EnrollStep,
    code: Annotated[str, Form()],
) -> Response:
    return await _with_code(
        request,
        session,
        runtime,
        current,
        code,
        partial(_enrollment_page, request, runtime, current),
    )


def _welcome_page(
    request: Request, runtime: Runtime, email: str, token: str, error: str | None = None
) -> Response:
    context = {"email": email, "action": WELCOME_PATH + token, "error": error}
    return _with_form_token(
        request, runtime, "console/welcome.html", context, 422 if error else 200
    )


@router.get("/welcome/{token}")
async def welcome_form(
    request: Request, token: str, session: SessionDep, runtime: RuntimeDep
) -> Response:
    account = await accounts.redeem_link(session, token, runtime.clock.now())
    return _welcome_page(request, runtime, account.email, token)


@router.post("/welcome/{token}", dependencies=[FormChecked])
async def welcome(
    request: Request,
    token: str,
    session: SessionDep,
    runtime: RuntimeDep,
    password: Annotated[str, Form()],
    confirmation: Annotated[str, Form()],
) -> Response:
    ip = client_address(request, runtime.settings)
    now = runtime.clock.now()
    try:
        opened = await signing.with_link(
            session, token, password, confirmation, ip, now, runtime.settings
        )
    except InvalidRequest as invalid:
        account = await accounts.redeem_link(session, token, now)
        return _welcome_page(request, runtime, account.email, token, invalid.message)
    return _to_step(opened, runtime)


@router.post("/sign-out", dependencies=[Depends(checked_csrf)])
async def sign_out(session: SessionDep, runtime: RuntimeDep, current: CurrentDep) -> Response:
    assert current is not None  # checked_csrf refuses a request without a session
    await sessions.revoke(session, current.session, runtime.clock.now())
    response = redirect(SIGN_IN_PATH)
    clear_cookie(response, SESSION_COOKIE)
    return response
