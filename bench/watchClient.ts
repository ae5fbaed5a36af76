/**
 * One process of the watch scenario's clients (scenarios/watch.ts forks several): it holds its
 * share of the watchers, each on its own connection, and notes when each answer arrives. The
 * clients are processes of their own so that reading 10,000 answers is not the work of the
 * process that times them, nor of the server's: an answer's time is taken when its status line
 * and headers have been parsed, on the system-wide monotonic clock (CLOCK_MONOTONIC, the same in
 * every process), and the parent subtracts the time the push's 200 arrived.
 *
 * Two kinds of watcher: cfghub's long-poll (`GET /rest/pull` with `If-None-Match` and `Wait`,
 * held again after each answer) and etcd's watch stream (`POST /v3/watch` through its HTTP
 * gateway, one stream per watcher, events as they come).
 *
 * Messages from the parent, after this process said `hello`: `arm` (the watchers, then `armed` back once all requests are sent),
 * `round` (which groups a push will change; `ready` back), `end` (the round's samples back, then
 * the watchers answered in the round are held again), `stop`.
 */
import http from 'node:http';

export interface WatcherSpec {
  /** The group (context or key) it watches: what a round says is affected. */
  readonly group: number;
  /** cfghub: the Context header; etcd: the key. */
  readonly target: string;
  /** cfghub: the ETag held at the start. */
  readonly etag?: string;
}

export type ToClient =
  | { type: 'arm'; kind: 'cfghub' | 'etcd'; url: string; path: string; watchers: WatcherSpec[] }
  | { type: 'round'; affected: number[] | 'all' | 'none' }
  | { type: 'end' }
  | { type: 'stop' };

export type FromClient =
  | { type: 'hello' }
  | { type: 'armed' }
  | { type: 'created'; count: number }
  | { type: 'ready'; expected: number }
  | { type: 'complete' }
  | { type: 'samples'; times: number[]; spurious: number; outside: number; failures: number };

/**
 * Every connection stays open between a watcher's answer and its next watch, as a watching client
 * keeps it (and as etcd's watch streams stay open). With the Agent's default of 256 free sockets
 * kept, a round's answered watchers beyond 256 had their connections closed as their answers
 * arrived: the server then handled 9,700 connections closing inside the very window timed, and
 * 9,700 new ones at the next round.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: Infinity });
const now = () => Number(process.hrtime.bigint()) / 1e6;
const send = (message: FromClient) => process.send!(message);

interface Watcher {
  readonly spec: WatcherSpec;
  etag: string;
}

let round: { affected: (group: number) => boolean; expected: number; times: number[]; spurious: number } | undefined;
let outside = 0;
let failures = 0;
let stopping = false;
/** Watchers answered during a round: held again after it, so re-arming does not load the server while it answers. */
let rearm: Watcher[] = [];

/** An answer of `watcher` (group `group`) arrived at `at`. */
function answered(group: number, at: number): void {
  if (!round) outside++;
  else if (!round.affected(group)) round.spurious++;
  else {
    round.times.push(at);
    if (round.times.length === round.expected) send({ type: 'complete' });
  }
}

function armCfghub(url: string, path: string, watcher: Watcher): void {
  if (stopping) return;
  const req = http.request(
    `${url}${path}`,
    { agent, headers: { Context: watcher.spec.target, 'If-None-Match': watcher.etag, Wait: '300' } },
    (res) => {
      const at = now();
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 304) return armCfghub(url, path, watcher); // the wait ended: hold again
        if (res.statusCode !== 200) {
          failures++;
          setTimeout(() => armCfghub(url, path, watcher), 100);
          return;
        }
        answered(watcher.spec.group, at);
        watcher.etag = String(res.headers.etag ?? '');
        if (round) rearm.push(watcher);
        else armCfghub(url, path, watcher);
      });
    },
  );
  req.on('error', () => {
    // A connection refused or reset while thousands open at once (the listen backlog): again, shortly.
    failures++;
    if (!stopping) setTimeout(() => armCfghub(url, path, watcher), 100);
  });
  req.end();
}

let created = 0;
function armEtcd(url: string, spec: WatcherSpec): void {
  const req = http.request(
    `${url}/v3/watch`,
    { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } },
    (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = now();
        // One JSON message per chunk from grpc-gateway: the creation, then events.
        if (chunk.includes('"created":true')) send({ type: 'created', count: ++created });
        const events = chunk.split('"events"').length - 1;
        for (let e = 0; e < events; e++) answered(spec.group, at);
      });
    },
  );
  req.on('error', () => failures++);
  req.end(JSON.stringify({ create_request: { key: Buffer.from(spec.target).toString('base64') } }));
}

let watchers: Watcher[] = [];
let arm: (watcher: Watcher) => void = () => undefined;

process.on('message', async (message: ToClient) => {
  if (message.type === 'arm') {
    watchers = message.watchers.map((spec) => ({ spec, etag: spec.etag ?? '' }));
    arm =
      message.kind === 'cfghub'
        ? (watcher) => armCfghub(message.url, message.path, watcher)
        : (watcher) => armEtcd(message.url, watcher.spec);
    // Opened in slices, as clients of a real fleet arrive, rather than thousands of connects in one tick.
    for (let i = 0; i < watchers.length; i += 100) {
      for (const watcher of watchers.slice(i, i + 100)) arm(watcher);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    send({ type: 'armed' });
  } else if (message.type === 'round') {
    const affected = message.affected;
    const test =
      affected === 'all' ? () => true : affected === 'none' ? () => false : (group: number) => affected.includes(group);
    const expected = watchers.filter((w) => test(w.spec.group)).length;
    round = { affected: test, expected, times: [], spurious: 0 };
    send({ type: 'ready', expected });
    if (expected === 0) send({ type: 'complete' });
  } else if (message.type === 'end') {
    const done = round!;
    round = undefined;
    send({ type: 'samples', times: done.times, spurious: done.spurious, outside, failures });
    outside = 0;
    for (const watcher of rearm.splice(0)) arm(watcher);
    rearm = [];
  } else if (message.type === 'stop') {
    stopping = true;
    agent.destroy();
    process.disconnect();
  }
});

// Messages sent before this listener was there would be lost: the parent waits for this one first.
send({ type: 'hello' });
