/**
 * The Node fallback load generator's own process (see nodeLoad.ts): N loops, each one request in
 * flight at a time over a keep-alive agent of N sockets, until the slice's time or request budget
 * is spent. Every answer must be a 200 of the expected size. Latencies go to a 1 µs histogram,
 * the same form wrk reports. It exits when the parent disconnects or stops it.
 */
import { Agent, request as httpRequest } from 'node:http';
import type { LoadSlice, SliceResult } from './load.js';
import type { NodeLoadReply, NodeLoadRequest } from './nodeLoad.js';
import { histogramPercentile, type Histogram } from './stats.js';

/** A hard cap per slice besides its time, so no loop can run away. */
const MAX_REQUESTS_PER_SLICE = 500_000;

function request(
  agent: Agent,
  url: string,
  headers: Readonly<Record<string, string>>,
  body?: string,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? 'GET' : 'POST';
    const outgoing = httpRequest(url, { agent, headers, method }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.once('error', reject);
    });
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}

async function runSlice(slice: LoadSlice): Promise<SliceResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: slice.connections });
  const counts = new Map<number, number>();
  let issued = 0;
  let requests = 0;
  const started = performance.now();
  const deadline = started + slice.seconds * 1000;
  let finished = started;
  let failed = false;
  const loop = async () => {
    // One failed loop stops the others at their next request: the slice has failed anyway.
    while (!failed && performance.now() < deadline && issued < MAX_REQUESTS_PER_SLICE) {
      issued++;
      const t0 = performance.now();
      const { status, bytes } = await request(agent, slice.url, slice.headers, slice.body).catch((error: unknown) => {
        failed = true;
        throw error;
      });
      finished = performance.now();
      if (status !== 200 || bytes < slice.bodyBytes) {
        failed = true;
        throw new Error(
          `${slice.body === undefined ? 'GET' : 'POST'} ${slice.url} answered ${status} with ${bytes} bytes, expected 200 with at least ${slice.bodyBytes}`,
        );
      }
      const micros = Math.round((finished - t0) * 1000);
      counts.set(micros, (counts.get(micros) ?? 0) + 1);
      requests++;
    }
  };
  try {
    await Promise.all(Array.from({ length: slice.connections }, loop));
  } finally {
    agent.destroy();
  }
  const histogram: Histogram = [...counts.entries()].sort((a, b) => a[0] - b[0]);
  const seconds = (finished - started) / 1000;
  return {
    requests,
    seconds,
    requestsPerSecond: requests / seconds,
    p50: histogramPercentile(histogram, 50),
    p99: histogramPercentile(histogram, 99),
    histogram,
  };
}

process.on('message', (message: NodeLoadRequest) => {
  runSlice(message.slice).then(
    (value) => process.send!({ id: message.id, ok: true, value } satisfies NodeLoadReply),
    (error: unknown) =>
      process.send!({
        id: message.id,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      } satisfies NodeLoadReply),
  );
});
process.on('disconnect', () => process.exit(0));
