-- Prints one machine-readable line after a wrk run; latencies in microseconds.
-- wrk's own --latency table stops at p99; the p99.9 here comes from the same histogram.
done = function(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout
  io.write(string.format(
    "RESULT requests=%d rps=%.0f p50=%d p90=%d p99=%d p999=%d max=%d errors=%d non2xx=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.max, errors, summary.errors.status))
end
