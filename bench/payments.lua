-- wrk script for POST /api/v1/payments (bench/compare.sh): a test-mode Mobile Money payment
-- whose number ends in 0000 (settled at once), signed in turn with each key of the file
-- $BENCH_KEYS (one a line: one key = one merchant; 200 keys = 200 merchants spread over the
-- requests). Every request is built once, in init; `done` prints one RESULT line to parse.

local body = '{"amount": 1000, "operator": "mtn", "phone_number": "22997000000"}'
local prepared = {}
local turn = 1

function init(args)
  local path = os.getenv("BENCH_KEYS") or error("BENCH_KEYS: the file of test keys")
  for key in io.lines(path) do
    if key ~= "" then
      prepared[#prepared + 1] = wrk.format("POST", "/api/v1/payments", {
        ["Content-Type"] = "application/json",
        ["Authorization"] = "Bearer " .. key,
      }, body)
    end
  end
  if #prepared == 0 then error("no key in " .. path) end
  -- Threads start at different keys, so that two threads do not pay for the same merchant
  -- in step.
  turn = (math.floor(os.clock() * 1e6) % #prepared) + 1
end

function request()
  local this = prepared[turn]
  turn = turn % #prepared + 1
  return this
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f "
      .. "non2xx=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    e.status, e.connect + e.read + e.write + e.timeout))
end
