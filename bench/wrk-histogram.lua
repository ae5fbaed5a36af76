-- Loaded by bench/wrk.ts with `wrk -s`: after wrk's own report, prints the run's exact totals and
-- its latency histogram (one line per non-empty 1 µs bucket), so the bench can check every answer
-- arrived whole and pool its slices into true percentiles. Durations and latencies in µs.
-- With WRK_POST_BODY set, every request is a POST of that body (etcd's range read).
local post_body = os.getenv("WRK_POST_BODY")
if post_body then
  wrk.method = "POST"
  wrk.body = post_body
  wrk.headers["Content-Type"] = "application/json"
end

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("bench-summary %d %d %d %d %d %d %d %d\n", summary.duration, summary.requests, summary.bytes,
    errors.connect, errors.read, errors.write, errors.status, errors.timeout))
  for i = 1, #latency do
    local micros, count = latency(i)
    io.write(string.format("bench-latency %d %d\n", micros, count))
  end
end
