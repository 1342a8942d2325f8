"""Signing in and out behind a door: the sign-in form, the TOTP code, the TOTP enrollment,
the one-time link's page (a new password), sign-out. Pages without a session: every other
page behind the door needs one."""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations at
# runtime, and they name values local to the functions that make them.

from collections.abc import Callable
from functools import partial
from typing import Annotated, Any

import segno
from fastapi import APIRouter, Depends, Form, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from cauri.http import RuntimeDep, SessionDep, UnitOfWorkRoute
from cauri.kit.errors import InvalidRequest
from cauri.people import accounts, sessions
from cauri.people import sign_in as signing
from cauri.people.sessions import Current, Opened
from cauri.runtime import Runtime
from cauri.signin.auth import checked_csrf, current_session, form_checked, pending, signed_in
from cauri.signin.door import Door, client_address
from cauri.signin.route import Render, redirect


def sign_in_routes(door: Door, render: Render, route_class: type[UnitOfWorkRoute]) -> APIRouter:
    """The sign-in pages of `door`, relative to its prefix, drawn by `render` (templates of
    cauri/signin/templates/signin/, which extend `door.layout`)."""
    router = APIRouter(route_class=route_class, include_in_schema=False)
    step_paths = {
        None: door.home_path,
        signing.TOTP: f"{door.prefix}/sign-in/code",
        signing.ENROLL: f"{door.prefix}/two-factor",
    }
    current_dep: Any = Depends(current_session(door))
    csrf_dep = Depends(checked_csrf(door))
    form_dep = Depends(form_checked(door))
    totp_dep: Any = Depends(pending(door, signing.TOTP))
    enroll_dep: Any = Depends(pending(door, signing.ENROLL))
    CurrentDep = Annotated[Current | None, current_dep]
    TotpStep = Annotated[Current, totp_dep]
    EnrollStep = Annotated[Current, enroll_dep]
    signed_in_dep: Any = Depends(signed_in(door))
    SignedInDep = Annotated[Current, signed_in_dep]

    def page(
        request: Request, name: str, context: dict[str, Any], status_code: int = 200
    ) -> Response:
        return render(request, f"signin/{name}", context | {"door": door}, status_code)

    def with_form_token(
        request: Request,
        runtime: Runtime,
        name: str,
        context: dict[str, Any],
        status_code: int = 200,
    ) -> Response:
        """A form shown before any session, with its signed double-submit token."""
        nonce = door.form_nonce(request)
        context = context | {"csrf": door.form_token(runtime.settings, nonce)}
        response = page(request, name, context, status_code)
        door.set_cookie(response, door.form_cookie, nonce)
        return response

    def to_step(opened: Opened, runtime: Runtime) -> Response:
        """To the next step of the sign-in, with the new session's cookie."""
        response = redirect(step_paths[opened.session.pending])
        max_age = int(sessions.lifetime(runtime.settings).total_seconds())
        door.set_cookie(response, door.session_cookie, opened.token, max_age=max_age)
        door.clear_cookie(response, door.form_cookie)
        return response

    def sign_in_page(
        request: Request, runtime: Runtime, email: str = "", error: str | None = None
    ) -> Response:
        context = {"email": email, "error": error}
        return with_form_token(request, runtime, "sign_in.html", context, 401 if error else 200)

    @router.get("/sign-in")
    async def sign_in_form(request: Request, current: CurrentDep, runtime: RuntimeDep) -> Response:
        if current is not None:
            return redirect(step_paths[current.session.pending])
        return sign_in_page(request, runtime)

    @router.post("/sign-in", dependencies=[form_dep])
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
            opened = await signing.with_password(
                session, door.realm, email, password, ip, now, runtime.settings
            )
        except signing.WrongCredentials as wrong:
            return sign_in_page(request, runtime, email, wrong.message)
        return to_step(opened, runtime)

    async def with_code(
        request: Request,
        session: AsyncSession,
        runtime: Runtime,
        current: Current,
        code: str,
        again: Callable[[str], Response],
    ) -> Response:
        """The TOTP step passed, or its page `again` saying why not."""
        ip = client_address(request, runtime.settings)
        now = runtime.clock.now()
        try:
            opened = await signing.with_code(session, current, code, ip, now, runtime.settings)
        except signing.WrongCode as wrong:
            return again(wrong.message)
        return to_step(opened, runtime)

    def code_page(request: Request, current: Current, error: str | None = None) -> Response:
        context = {"csrf": current.session.csrf_token, "error": error}
        return page(request, "code.html", context, 401 if error else 200)

    @router.get("/sign-in/code")
    async def code_form(request: Request, current: TotpStep) -> Response:
        return code_page(request, current)

    @router.post("/sign-in/code", dependencies=[csrf_dep])
    async def code(
        request: Request,
        session: SessionDep,
        runtime: RuntimeDep,
        current: TotpStep,
        code: Annotated[str, Form()],
    ) -> Response:
        again = partial(code_page, request, current)
        return await with_code(request, session, runtime, current, code, again)

    def enrollment_page(
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
        return page(request, "enroll.html", context, 401 if error else 200)

    @router.get("/two-factor")
    async def enroll_form(request: Request, runtime: RuntimeDep, current: EnrollStep) -> Response:
        return enrollment_page(request, runtime, current)

    @router.post("/two-factor", dependencies=[csrf_dep])
    async def enroll(
        request: Request,
        session: SessionDep,
        runtime: RuntimeDep,
        current: EnrollStep,
        code: Annotated[str, Form()],
    ) -> Response:
        again = partial(enrollment_page, request, runtime, current)
        return await with_code(request, session, runtime, current, code, again)

    def welcome_page(
        request: Request, runtime: Runtime, email: str, token: str, error: str | None = None
    ) -> Response:
        context = {"email": email, "action": door.welcome_path + token, "error": error}
        return with_form_token(request, runtime, "welcome.html", context, 422 if error else 200)

    @router.get("/welcome/{token}")
    async def welcome_form(
        request: Request, token: str, session: SessionDep, runtime: RuntimeDep
    ) -> Response:
        account = await accounts.redeem_link(session, door.realm, token, runtime.clock.now())
        return welcome_page(request, runtime, account.email, token)

    @router.post("/welcome/{token}", dependencies=[form_dep])
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
                session, door.realm, token, password, confirmation, ip, now, runtime.settings
            )
        except InvalidRequest as invalid:
            account = await accounts.redeem_link(session, door.realm, token, now)
            return welcome_page(request, runtime, account.email, token, invalid.message)
        return to_step(opened, runtime)

    @router.post("/two-factor/start", dependencies=[csrf_dep])
    async def start_enrollment(
        request: Request, session: SessionDep, runtime: RuntimeDep, current: SignedInDep
    ) -> Response:
        """A second factor asked for by someone whose role does not require one."""
        now = runtime.clock.now()
        ip = client_address(request, runtime.settings)
        opened = await signing.offer_enrollment(session, current, ip, now, runtime.settings)
        return to_step(opened, runtime)

    @router.post("/sign-out", dependencies=[csrf_dep])
    async def sign_out(session: SessionDep, runtime: RuntimeDep, current: CurrentDep) -> Response:
        assert current is not None  # the CSRF check refuses a request without a session
        await sessions.revoke(session, current.session, runtime.clock.now())
        response = redirect(door.sign_in_path)
        door.clear_cookie(response, door.session_cookie)
        return response

    return router
