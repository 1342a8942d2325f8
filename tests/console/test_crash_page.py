"""A crash in a console page (a bug, a database gone) is a French 500 page with the console's
security headers, nothing of the exception shown (it is logged, as the API's crashes are),
and the staff member's session intact."""

from __future__ import annotations

import pytest
import structlog

from cauri.runtime import Runtime
from cauri.staff import overview
from tests.console.builders import ConsoleClient, make_staff
from tests.console.test_read_pages import _text

SECRET = "détail interne 12345"


async def test_a_crash_is_a_page_that_shows_nothing_of_it(
    console: ConsoleClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    await console.signed_in_as(await make_staff(runtime, "koffi@cauri.example", "viewer"))

    async def broken(*_: object) -> None:
        raise RuntimeError(SECRET)

    monkeypatch.setattr(overview, "overview", broken)
    # Captured, not rendered: structlog's default console renderer draws the traceback with
    # every frame's locals, which takes the test server a minute (`cauri serve` sets plain
    # tracebacks, kit.logging).
    with structlog.testing.capture_logs() as logged:
        answer = await console.get("/console/")
    [crash] = [entry for entry in logged if entry["event"] == "http.unhandled_error"]
    assert crash["path"] == "/console/" and SECRET in str(crash["exc_info"])
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/html")
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert "Erreur interne" in _text(answer) and "rien n'a été enregistré" in _text(answer)
    assert SECRET not in answer.text and "RuntimeError" not in answer.text
    # The session lives on: the next page works.
    monkeypatch.undo()
    assert (await console.get("/console/")).status_code == 200
