/** The server's watch on commits made outside cfghub (service/schemas/outsideCommits.ts), one per HttpDeps. */
import { OutsideCommitWatch } from '../service/schemas/outsideCommits.js';
import type { HttpDeps } from './deps.js';

const watches = new WeakMap<HttpDeps, OutsideCommitWatch>();

/** The watch of a server's repositories, made on first use. */
export function outsideCommitWatchOf(deps: HttpDeps): OutsideCommitWatch {
  let watch = watches.get(deps);
  if (!watch) {
    watch = new OutsideCommitWatch(deps.registry, deps.logger);
    watches.set(deps, watch);
  }
  return watch;
}
