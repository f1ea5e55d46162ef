-- Shared by every bench script: one machine-readable line the harness parses.
-- Latencies are wrk's own histogram, in microseconds. errors.status counts responses
-- with a status of 400 or more (wrk's definition), reported as non2xx.
function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"rps":%.2f,"p50_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"non2xx":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d}\n',
    summary.requests, summary.duration, summary.requests / seconds,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout))
end
