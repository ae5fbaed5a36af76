/**
 * wrk (https://github.com/wg/wrk), the C load generator: one thread (`-t1`, so on a two-core
 * machine the server keeps a core to itself), N keep-alive connections, for whole seconds. Its
 * report is parsed (`Requests/sec`, the `--latency` percentiles, errors), and bench/wrk-histogram.lua
 * adds exact totals and the latency histogram.
 *
 * wrk corrects its latencies for coordinated omission before reporting them: after the run, each
 * answer slower than twice the mean interval per connection adds synthetic entries (its latency
 * minus one interval, minus two, …) standing for the requests a client at a steady rate would
 * have sent meanwhile. Its percentiles and the histogram both include them, so the histogram
 * holds more entries than there were requests, and its p99 runs higher than raw latencies would.
 * The bench reports wrk's figures as wrk computes them, and says so.
 *
 * `CFGHUB_BENCH_WRK` names another binary (a path to a missing one forces the Node fallback).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild, track } from './childProcesses.js';
import type { LoadGenerator, LoadSlice, SliceResult } from './load.js';
import type { Histogram } from './stats.js';

const WRK = process.env.CFGHUB_BENCH_WRK || 'wrk';
const SCRIPT = fileURLToPath(new URL('./wrk-histogram.lua', import.meta.url));
/** Per-request timeout: far above any latency seen, so no slow answer is dropped as a "timeout". */
const REQUEST_TIMEOUT = '10s';
/** wrk stops by itself after -d; this long past it, it is killed and the slice fails. */
const OVERRUN_MS = 15_000;

interface Finished {
  readonly code: number | null;
  readonly output: string;
}

function run(args: readonly string[], limitMs: number, postBody?: string): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const env = postBody === undefined ? process.env : { ...process.env, WRK_POST_BODY: postBody };
    const child = track(spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'], env }));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      stopChild(child).catch(() => undefined);
    }, limitMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** wrk's version (`4.1.0`), or undefined when there is no wrk to run. */
export async function wrkVersion(): Promise<string | undefined> {
  try {
    // `wrk --version` prints "wrk 4.1.0 [epoll] …" then its usage, and exits 1: the text tells, not the status.
    const { output } = await run(['--version'], 10_000);
    return /^wrk (?:debian\/)?(\S+)/m.exec(output)?.[1];
  } catch {
    return undefined;
  }
}

/** `826.00us`, `1.04ms`, `1.20s`, `2.00m` in milliseconds. */
function milliseconds(value: string, unit: string): number {
  const factor: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
  if (!(unit in factor)) throw new Error(`unknown wrk time unit ${unit}`);
  return Number(value) * factor[unit];
}

function required(text: string, pattern: RegExp, what: string): RegExpExecArray {
  const match = pattern.exec(text);
  if (!match) throw new Error(`wrk's report has no ${what}:\n${text.slice(0, 2000)}`);
  return match;
}

/** Parses one wrk report (with the histogram script's lines) and checks every answer was a whole 200. */
export function parseWrkReport(text: string, bodyBytes: number): SliceResult {
  const requestsPerSecond = Number(required(text, /^Requests\/sec:\s+([\d.]+)/m, 'Requests/sec line')[1]);
  const p50 = required(text, /^\s+50%\s+([\d.]+)(us|ms|s|m)\s*$/m, '50% latency line');
  const p99 = required(text, /^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m, '99% latency line');
  const non2xx = /^\s*Non-2xx or 3xx responses: (\d+)/m.exec(text);
  if (non2xx) throw new Error(`wrk got ${non2xx[1]} answers that were not 2xx or 3xx`);
  const socket = /^\s*Socket errors: (.*)$/m.exec(text);
  if (socket) throw new Error(`wrk had socket errors: ${socket[1]}`);

  const totals = required(
    text,
    /^bench-summary (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m,
    'bench-summary line (wrk-histogram.lua)',
  )
    .slice(1)
    .map(Number);
  const [durationMicros, requests, bytes, ...errors] = totals;
  if (errors.some((count) => count > 0))
    throw new Error(`wrk counted errors (connect, read, write, status, timeout): ${errors.join(', ')}`);
  // Headers come on top of the body, so fewer bytes than bodies means some answer was cut short.
  if (bytes < requests * bodyBytes)
    throw new Error(`wrk read ${bytes} bytes for ${requests} answers of ${bodyBytes} bytes each`);
  const histogram: Histogram = [...text.matchAll(/^bench-latency (\d+) (\d+)$/gm)].map(
    (m) => [Number(m[1]), Number(m[2])] as const,
  );
  const counted = histogram.reduce((sum, [, count]) => sum + count, 0);
  // At least one entry per answer; more when wrk added its coordinated-omission entries.
  if (counted < requests) throw new Error(`wrk's histogram holds ${counted} entries for ${requests} requests`);
  return {
    requests,
    seconds: durationMicros / 1e6,
    requestsPerSecond,
    p50: milliseconds(p50[1], p50[2]),
    p99: milliseconds(p99[1], p99[2]),
    histogram,
  };
}

export class WrkLoad implements LoadGenerator {
  readonly name: string;
  readonly description: string;

  constructor(version: string) {
    this.name = `wrk ${version}`;
    this.description = `wrk ${version} (bench/install-tools.sh installs it), a separate process: \`wrk -t1 -cN -dSs --latency -H 'Context: …' URL\`; its latencies include its coordinated-omission correction (synthetic entries for answers slower than twice the mean), as its own percentiles do`;
  }

  async run(slice: LoadSlice): Promise<SliceResult> {
    const headers = Object.entries(slice.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
    const args = [
      '-t1',
      `-c${slice.connections}`,
      `-d${slice.seconds}s`,
      '--latency',
      '--timeout',
      REQUEST_TIMEOUT,
      '-s',
      SCRIPT,
      ...headers,
      slice.url,
    ];
    const { code, output } = await run(args, slice.seconds * 1000 + OVERRUN_MS, slice.body);
    if (code !== 0) throw new Error(`wrk ${args.join(' ')} exited with ${code}:\n${output.slice(0, 2000)}`);
    return parseWrkReport(output, slice.bodyBytes);
  }

  async close(): Promise<void> {
    // Each slice's wrk has exited by the time run() resolves: nothing is kept between slices.
  }
}
