"""Issue 27: the OpenAPI document is complete enough for other languages' clients. A
TypeScript client is generated from the document a running Cauri serves
(`clients/typescript`: openapi-typescript's types, openapi-fetch's calls, versions pinned by
its package-lock.json), a program using it is type-checked by tsc (strict), and run with Node
against the server: it creates a test payment, reads it back by reference, and reads a
missing one (a typed refusal).

Everything happens in a copy of the client's folder under the test's temporary directory;
npm's own cache (~/.npm) makes the install fast after the first run. Skipped only where
Node or npm is absent; a failing install, generation, compilation or run fails the test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import MerchantKeys, ServerThread

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "typescript"
# What the copy takes: the pins, the compiler's settings, the hand-written sources (the
# generated src/schema.d.ts, node_modules and dist are made in the copy).
SOURCES = (
    "package.json",
    "package-lock.json",
    ".npmrc",
    "tsconfig.json",
    "src/client.ts",
    "src/example.ts",
)
# One limit for each step (npm ci from an empty cache on a slow network is the longest).
STEP_TIMEOUT = 300.0

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="Node.js and npm are not installed: the TypeScript client cannot be generated",
)


def run(args: list[str], cwd: Path, **env: str) -> str:
    """Runs a step in the copy; a failure fails the test with the step's output."""
    environment = os.environ | {"NO_COLOR": "1", "npm_config_update_notifier": "false"} | env
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=STEP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"`{' '.join(args)}` took more than {STEP_TIMEOUT:.0f} s: {error.output}")
    if done.returncode != 0:
        pytest.fail(
            f"`{' '.join(args)}` exited {done.returncode}\n"
            f"stdout:\n{done.stdout[-4000:]}\nstderr:\n{done.stderr[-4000:]}"
        )
    return done.stdout


def test_a_generated_typescript_client_creates_and_reads_a_payment(
    server: ServerThread, merchant: MerchantKeys, tmp_path: Path
) -> None:
    work = tmp_path / "typescript"
    for name in SOURCES:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CLIENT / name, work / name)
    document = httpx.get(f"{server.base_url}/api/v1/openapi.json", timeout=30)
    assert document.status_code == 200
    (work / "openapi.json").write_text(document.text)

    run(["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund"], work)
    run(["npm", "run", "generate"], work)
    assert "Envelope_PaymentObject_" in (work / "src" / "schema.d.ts").read_text()
    run(["npm", "run", "build"], work)  # tsc, strict: no JavaScript if a type is wrong
    # src/example.ts: each call's path, parameters, body and answers typed by the generated
    # schema (a field the document lacked would not compile).
    output = run(
        ["node", "dist/example.js"], work, CAURI_KEY=merchant.test_key, CAURI_URL=server.base_url
    )

    seen: dict[str, Any] = json.loads(output.strip().splitlines()[-1])
    created, read = seen["created"], seen["read"]
    assert created["http"] == 201 and created["status"] == "succeeded"
    assert read == {"reference": created["reference"], "status": "succeeded", "amount": 5000}
    assert seen["missing"] == {"http": 404, "code": "not_found"}
    # The server agrees: the payment exists, in test mode, for this merchant.
    again = httpx.get(
        f"{server.base_url}/api/v1/payments/{created['reference']}",
        headers=merchant.headers(),
        timeout=30,
    )
    assert again.json()["data"]["status"] == "succeeded"
    assert again.json()["data"]["livemode"] is False
