/**
 * A vitest setup file: Node's fetch in test processes never reuses a kept-alive connection that
 * may have idled out on the server.
 *
 * Why: a test blocks its own event loop with synchronous helpers (the `cfghub` command, git),
 * seconds at a time on a loaded machine. undici closes an idle connection a second before the
 * server's keep-alive timeout (5 s for `cfghub serve`) by a timer, and that timer cannot fire
 * while the loop is blocked: the next fetch after the block is written on a connection the server
 * has closed, and is reset (`fetch failed`, ECONNRESET or EPIPE; undici does not retry a POST).
 * That is the client's race, not the server's fault, so the test client avoids it: when an
 * origin has had no request for longer than is safe, its requests go out on a new agent (new
 * connections), and the old agent closes once its requests in flight end.
 */
import { Agent, Dispatcher, setGlobalDispatcher } from 'undici';

/**
 * How long after a request's start its connection is surely still open on the server: below the
 * shortest keep-alive timeout of the servers tests start (5 s), with a second to spare.
 */
export const SAFE_IDLE_MS = 4_000;

class FreshAfterIdle extends Dispatcher {
  private agent = new Agent();
  private readonly lastStart = new Map<string, number>();

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const origin = String(options.origin);
    const now = performance.now();
    const last = this.lastStart.get(origin);
    if (last !== undefined && now - last > SAFE_IDLE_MS) this.renew();
    this.lastStart.set(origin, now);
    return this.agent.dispatch(options, handler);
  }

  /** A new agent for every origin; the old one ends its requests in flight, then closes. */
  private renew(): void {
    const old = this.agent;
    this.agent = new Agent();
    old.close().catch(() => undefined);
  }

  override close(): Promise<void> {
    return this.agent.close();
  }

  override destroy(): Promise<void> {
    return this.agent.destroy();
  }
}

setGlobalDispatcher(new FreshAfterIdle());
