/**
 * Preloaded into a server under test (`NODE_OPTIONS=--require <this file>`): measures the pauses
 * of the server's own event loop, and answers them on a loopback port of its own, printed on
 * stdout as `{"event":"loop-pauses","url":…}`.
 *
 * Why not `nodejs_eventloop_lag_max_seconds` of /metrics: prom-client's histogram ticks every
 * 10 ms and records whole intervals, so a reading of 19 ms is a pause of 9 to 19 ms; and it missed
 * a 27 ms pause outright in about one request of three (measured: 10.9 ms read beside a 27 ms
 * pause this timer saw). Here a 1 ms timer sees every turn of the loop.
 *
 * GET / answers `{ longestMs, busyMs }` since the last GET: the longest pause, and the sum of
 * every pause longer than 2 ms (the loop's busy time, near enough: shorter turns are the timer's
 * own jitter). The answer itself needs a turn of the loop, whose timers phase (this timer, overdue)
 * runs before its poll phase (this request): it counts every pause before it.
 */
'use strict';
const http = require('node:http');
const { performance } = require('node:perf_hooks');

const TICK_MS = 1;
const BUSY_OVER_MS = 2;

let last = performance.now();
let longestMs = 0;
let busyMs = 0;
setInterval(() => {
  const now = performance.now();
  const pauseMs = now - last - TICK_MS;
  last = now;
  if (pauseMs > longestMs) longestMs = pauseMs;
  if (pauseMs > BUSY_OVER_MS) busyMs += pauseMs;
}, TICK_MS).unref();

const probe = http.createServer((req, res) => {
  const body = JSON.stringify({ longestMs, busyMs });
  longestMs = 0;
  busyMs = 0;
  res.setHeader('Content-Type', 'application/json');
  res.end(body);
});
probe.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'loop-pauses', url: `http://127.0.0.1:${probe.address().port}/` })}\n`);
});
probe.unref();
