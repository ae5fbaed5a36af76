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
 * A pause counts the work done in it, not the time the machine's scheduler kept the process
 * waiting: the process's CPU time over the pause (`process.cpuUsage()`, every thread of it), when
 * that is less than the pause's length. On a loaded machine a process waits for a core many times
 * a second, and a 5 ms piece of work can span 90 ms of wall time (seen: 93.6 ms under a load
 * average of 28 on two cores); work done in one piece still counts whole, since it burns CPU for
 * all of its length. The CPU time of other threads (the thread pool's file work, the garbage
 * collector's helpers) counts too, so a reading is a bound from above.
 *
 * GET / answers `{ longestMs, busyMs, longestWallMs }` since the last GET: the longest piece of
 * work, the sum of every piece longer than 2 ms (the loop's busy time, near enough: shorter turns
 * are the timer's own jitter), and the longest pause in wall time. The answer itself needs a turn
 * of the loop, whose timers phase (this timer, overdue) runs before its poll phase (this request):
 * it counts every pause before it.
 */
'use strict';
const http = require('node:http');
const { performance } = require('node:perf_hooks');

const TICK_MS = 1;
const BUSY_OVER_MS = 2;

/** CPU time of the whole process so far, in milliseconds. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

let last = performance.now();
let lastCpu = cpuMs();
let longestMs = 0;
let busyMs = 0;
let longestWallMs = 0;
setInterval(() => {
  const now = performance.now();
  const cpu = cpuMs();
  const pauseMs = now - last - TICK_MS;
  const workMs = Math.min(pauseMs, cpu - lastCpu);
  last = now;
  lastCpu = cpu;
  if (pauseMs > longestWallMs) longestWallMs = pauseMs;
  if (workMs > longestMs) longestMs = workMs;
  if (workMs > BUSY_OVER_MS) busyMs += workMs;
}, TICK_MS).unref();

const probe = http.createServer((req, res) => {
  const body = JSON.stringify({ longestMs, busyMs, longestWallMs });
  longestMs = 0;
  busyMs = 0;
  longestWallMs = 0;
  res.setHeader('Content-Type', 'application/json');
  // A kept-alive connection idle past the server's keep-alive timeout (the test may spend longer
  // than that between two readings) can be closed just as the client sends on it: one each.
  res.setHeader('Connection', 'close');
  res.end(body);
});
probe.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ event: 'loop-pauses', url: `http://127.0.0.1:${probe.address().port}/` })}\n`,
  );
});
probe.unref();
