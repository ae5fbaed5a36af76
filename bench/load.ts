/**
 * The HTTP load generator of the pull throughput scenario: wrk when it is installed
 * (bench/install-tools.sh installs it), else a Node client in a child process. Both run outside
 * the server's process, so they do not take CPU from it within one event loop; which one ran is
 * part of every result, since their own costs differ and figures of one are not figures of the other.
 */
import type { Log } from './fixtures.js';
import { NodeLoadProcess } from './nodeLoad.js';
import type { Histogram } from './stats.js';
import { WrkLoad, wrkVersion } from './wrk.js';

/** One timed slice of load against one URL. */
export interface LoadSlice {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Concurrent keep-alive connections, each with one request in flight at a time. */
  readonly connections: number;
  /** How long the slice runs (whole seconds: wrk's -d). */
  readonly seconds: number;
  /** The least body size of every answer; a short answer, another status or a socket error fails the slice. */
  readonly bodyBytes: number;
  /** When present, every request is a POST of this body (etcd's range read); else a GET. */
  readonly body?: string;
}

export interface SliceResult {
  readonly requests: number;
  /** How long the load actually ran. */
  readonly seconds: number;
  /** As the generator reports it (wrk's `Requests/sec`). */
  readonly requestsPerSecond: number;
  /** The generator's own latency percentiles for this slice, in ms (wrk's `--latency` lines). */
  readonly p50: number;
  readonly p99: number;
  /** Every request's latency, for pooling slices. */
  readonly histogram: Histogram;
}

export interface LoadGenerator {
  /** What the table and the notes call it, e.g. `wrk 4.1.0`. */
  readonly name: string;
  /** One sentence for the notes: the generator, its settings, and where it runs. */
  readonly description: string;
  run(slice: LoadSlice): Promise<SliceResult>;
  /** Stops whatever process the generator keeps, by its pid. */
  close(): Promise<void>;
}

export async function startLoadGenerator(log: Log): Promise<LoadGenerator> {
  const version = await wrkVersion();
  if (version) {
    log(`load generator: wrk ${version}`);
    return new WrkLoad(version);
  }
  log('load generator: wrk not found (bench/install-tools.sh installs it); using the Node client in a child process');
  return NodeLoadProcess.start();
}
