// Creates a test payment by Mobile Money and reads it back by its reference; prints both as
// one JSON line. Run: CAURI_KEY=sk_test_… CAURI_URL=http://127.0.0.1:8000 node dist/example.js
import { cauri, type ApiError, type Payment } from "./client.js";

// Node's own globals, without @types/node: the example needs only its environment.
declare const process: { env: Record<string, string | undefined>; exitCode?: number };

function fail(what: string, error: ApiError): never {
  throw new Error(`${what}: ${error.code}: ${error.message}`);
}

async function main(): Promise<void> {
  const key = process.env["CAURI_KEY"];
  if (!key) throw new Error("CAURI_KEY is not set");
  const api = cauri(key, process.env["CAURI_URL"] ?? "http://127.0.0.1:8000");

  // A test number ending 0000 succeeds at once.
  const created = await api.POST("/api/v1/payments", {
    body: {
      amount: 5000,
      operator: "mtn",
      phone_number: "22997000000",
      external_id: `ts-${Date.now()}`,
      description: "From the TypeScript client",
    },
  });
  if (created.error) fail("POST /api/v1/payments", created.error.error);
  const payment: Payment = created.data.data;

  const read = await api.GET("/api/v1/payments/{reference}", {
    params: { path: { reference: payment.reference } },
  });
  if (read.error) fail("GET /api/v1/payments/{reference}", read.error.error);
  const again: Payment = read.data.data;

  // A refusal is typed too: the error envelope, its `code` to branch on.
  const missing = await api.GET("/api/v1/payments/{reference}", {
    params: { path: { reference: "00000000-0000-0000-0000-000000000000" } },
  });

  console.log(
    JSON.stringify({
      created: { http: created.response.status, status: payment.status, reference: payment.reference },
      read: { reference: again.reference, status: again.status, amount: again.amount },
      missing: { http: missing.response.status, code: missing.error?.error.code ?? null },
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
