"""`cauri-client listen` and `trigger` (issue 27) against a served Cauri: each test event is
forwarded to a local receiver with the bytes and signature of a delivery, and a listener
restarted after a break forwards what it missed, once."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from cauri_client import Cauri
from cauri_client.listen import Forwarded, Listener
from cauri_client.trigger import trigger
from cauri_client.webhooks import verify
from tests.support import MerchantKeys, ServerThread
from tests.webhooks.receiver import Receiver

WAIT = 60  # seconds a read waits for what a test made (a slow machine's transactions)
CLIENT = Path(sys.executable).parent / "cauri-client"


def _forward_until(listener: Listener, count: int) -> list[Forwarded]:
    """Pages until `count` events were forwarded (a page may hold fewer: the feed gives
    what every earlier transaction has finished writing)."""
    forwarded: list[Forwarded] = []
    while len(forwarded) < count:
        page = listener.fetch(wait=WAIT)
        assert page.events, "no event within the wait"
        forwarded += listener.forward(page)
    return forwarded


async def test_each_event_is_forwarded_as_its_delivery_and_a_break_loses_nothing(
    cauri: Cauri, tmp_path: Path
) -> None:
    cursor_file = tmp_path / "cursor"
    with Receiver() as local, Receiver() as endpoint:
        secret = cauri.webhooks.set_endpoint(endpoint.url).secret
        listener = Listener(cauri, local.url, secret, cursor_file=cursor_file)
        trigger(cauri, "payment.succeeded")
        [first] = await asyncio.to_thread(_forward_until, listener, 1)
        assert (first.event.event, first.answer) == ("payment.succeeded", "200")
        [forwarded] = await local.wait_for(1)
        [delivered] = await endpoint.wait_for(1, within=WAIT)
        # The bytes Cauri delivered, signed with the same secret.
        assert forwarded.body == delivered.body
        assert verify(forwarded.body, forwarded.headers["x-service-signature"], secret).id == (
            first.event.id
        )
        for name in ("x-service-event", "x-service-delivery", "content-type", "user-agent"):
            assert forwarded.headers[name] == delivered.headers[name], name
        listener.close()

        # Stopped: what happens meanwhile is forwarded once the listener is back.
        trigger(cauri, "payment.failed")
        trigger(cauri, "payout.succeeded")  # a payment (the balance), then the payout
        again = Listener(cauri, local.url, secret, cursor_file=cursor_file)
        missed = await asyncio.to_thread(_forward_until, again, 3)
        assert [f.event.event for f in missed] == [
            "payment.failed",
            "payment.succeeded",
            "payout.succeeded",
        ]
        assert first.event.id not in {f.event.id for f in missed}
        assert again.fetch(wait=0).events == ()
        again.close()


async def _run(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        str(CLIENT), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=WAIT)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_the_commands_trigger_and_listen_until_interrupted(
    server: ServerThread, merchant: MerchantKeys, tmp_path: Path
) -> None:
    account = ["--key", merchant.test_key, "--base-url", server.base_url]
    with Receiver() as local:
        listening = await asyncio.create_subprocess_exec(
            str(CLIENT),
            "listen",  # as the README writes it: the command, then the account
            *account,
            "--forward-to",
            local.url,
            cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            assert listening.stdout is not None
            ready = await asyncio.wait_for(listening.stdout.readline(), timeout=WAIT)
            assert ready.decode().startswith("Ready: test events → ")
            code, made = await _run("trigger", "payment.succeeded", *account)
            assert code == 0 and made.startswith("payment.succeeded: payment "), made
            [received] = await local.wait_for(1, within=WAIT)
            assert received.headers["x-service-event"] == "payment.succeeded"
        finally:
            listening.send_signal(signal.SIGINT)
            rest, _ = await asyncio.wait_for(listening.communicate(), timeout=WAIT)
        output = rest.decode()
        assert listening.returncode == 0, output
        assert " payment.succeeded " in output and output.rstrip().endswith("→ 200")
        kept = await asyncio.to_thread(lambda: list(tmp_path.glob(".cauri-listen-*")))
        assert kept  # the position, to resume from

    code, refused = await _run("trigger", "payment.succeeded", "--key", "sk_live_x")
    assert code == 2 and "a test key is needed" in refused
