/**
 * A fetch from a primary that stops answering (a paused process: the kernel still accepts its
 * connections) ends as soon as its follower is stopped: git's transport processes, which hold the
 * fetch's stderr, end with it. An HA member's fetch runs in the repository's writers' queue, so a
 * fetch left waiting on the old, paused leader would keep the member from applying the new
 * leader's records.
 */
import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/harness.js';
import { tracked, until } from '../../support/poll.js';
import { fetchMirror } from '../../../src/service/replication/mirror.js';

/** The processes whose command line names `text`. */
function processesNaming(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

describe('a fetch from a primary that does not answer', () => {
  const folder = tempDir();
  const held = new Set<http.ServerResponse>();
  let silent: http.Server;
  let url: string;

  beforeAll(async () => {
    // Takes every request and never answers it, as a paused primary's kernel does.
    silent = http.createServer((_req, res) => held.add(res));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const res of held) res.destroy();
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
    folder.remove();
  });

  it('ends at once when its follower stops, with every process git started for it', async () => {
    const gitdir = join(folder.path, 'app.git');
    execFileSync('git', ['init', '--quiet', '--bare', gitdir]);
    const stop = new AbortController();
    const fetching = tracked(
      fetchMirror(gitdir, { primary: url, token: 'cfghub_replication_test' }, 'acme', 'app', false, stop.signal),
    );
    // git's HTTP transport is under way: a process of its names the primary's URL, and waits.
    await until(() => held.size > 0, 'the fetch’s request reaching the primary');
    expect(processesNaming(url).length).toBeGreaterThan(0);
    stop.abort();
    await until(() => fetching.settled(), 'the stopped fetch to end', 3_000);
    await expect(fetching.promise).rejects.toThrow(/git fetch of acme\/app failed/);
    expect(processesNaming(url)).toEqual([]);
  });
});
