-- wrk script for POST /api/v1/payouts (bench/payouts.sh): test-mode payouts from one
-- merchant's balance (key $BENCH_KEY), or from the balances of the merchants of the key file
-- $BENCH_KEYS in turn (one key a line), to a third-party Mobile Money number ending in 0000,
-- which the simulator pays at once (`succeeded` in the response). Each request carries an
-- external_id of its own, `<$BENCH_RUN>-<thread>-<n>`, as a merchant retrying safely would
-- send (spec: replaying POST /payouts is safe only with an external_id); $BENCH_RUN keeps
-- two runs on one database apart. `done` prints one RESULT line to parse, with the answers
-- counted by status: 201 paid, 402 refused (insufficient_funds), anything else.

local threads = {}

function setup(thread)
  thread:set("thread_number", #threads + 1)
  threads[#threads + 1] = thread
end

local path = "/api/v1/payouts"
local signed = {}
local turn = 1
local prefix = ""
local amount = 0
local sent = 0
paid, refused, other = 0, 0, 0

function init(args)
  local file = os.getenv("BENCH_KEYS")
  local keys = {}
  if file and file ~= "" then
    for key in io.lines(file) do
      if key ~= "" then keys[#keys + 1] = key end
    end
  else
    keys[1] = os.getenv("BENCH_KEY") or error("BENCH_KEY or BENCH_KEYS: test key(s)")
  end
  for i, key in ipairs(keys) do
    signed[i] = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key }
  end
  if #signed == 0 then error("no key in " .. file) end
  -- Threads start at different keys, so that two threads do not pay from one balance in step.
  turn = (math.floor(os.clock() * 1e6) % #signed) + 1
  prefix = (os.getenv("BENCH_RUN") or "run") .. "-" .. thread_number .. "-"
  amount = tonumber(os.getenv("BENCH_AMOUNT") or "1000")
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"amount": %d, "operator": "mtn", "phone_number": "22997000000", "external_id": "%s%d"}',
    amount, prefix, sent)
  local headers = signed[turn]
  turn = turn % #signed + 1
  return wrk.format("POST", path, headers, body)
end

function response(status, headers, body)
  if status == 201 then
    paid = paid + 1
  elseif status == 402 then
    refused = refused + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local counts = { paid = 0, refused = 0, other = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(counts) do counts[name] = counts[name] + thread:get(name) end
  end
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f "
      .. "paid=%d refused=%d other=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    counts.paid, counts.refused, counts.other, e.connect + e.read + e.write + e.timeout))
end
