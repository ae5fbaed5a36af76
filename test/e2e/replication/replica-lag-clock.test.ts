/**
 * A replica's lag on a clock that cannot go back: the replica (`cfghub serve --replica-of`) runs
 * under libfaketime with its wall clock read from a file and its monotonic clock left alone; its
 * primary is stopped, then its wall clock is stepped back an hour, as NTP may step a clock. The
 * lag it reports keeps growing: measured from the last confirmation on the monotonic clock.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliOk, getJson, pushTo, tempDir } from '../../support/harness.js';
import { eventually } from '../../support/replicas.js';
import { startServerProcess, type ServerProcess } from '../../support/serverProcess.js';
import { FAKETIME_LIBRARY, fakeTimeEnv } from '../../support/fakeTime.js';

const dirs = { primary: tempDir(), replica: tempDir(), clock: tempDir() };
const running: ServerProcess[] = [];
const faketime = FAKETIME_LIBRARY !== undefined;

afterAll(async () => {
  for (const server of running) await server.kill();
  for (const dir of Object.values(dirs)) dir.remove();
});

const lagOf = async (url: string) =>
  (await getJson(url, '/rest/pull/acme/app', { Context: 'Prod' })).headers.get('replica-lag');

describe('Replica-Lag when the wall clock steps back', () => {
  it.skipIf(!faketime)('keeps growing while the primary is away', async () => {
    cliOk(
      dirs.primary.path,
      'repo',
      'create',
      'acme/app',
      '--context',
      'Env',
      '--token-free-push',
      '--token-free-pull',
    );
    const token = cliOk(dirs.primary.path, 'token', 'create', '--replication').trim();
    const clock = join(dirs.clock.path, 'offset');
    fs.writeFileSync(clock, '+0\n');
    const primary = await startServerProcess(dirs.primary.path);
    running.push(primary);
    const env = {
      CFGHUB_REPLICATION_TOKEN: token,
      ...fakeTimeEnv({ FAKETIME_TIMESTAMP_FILE: clock, FAKETIME_NO_CACHE: '1' }),
    };
    const replica = await startServerProcess(dirs.replica.path, env, [], ['--replica-of', primary.url]);
    running.push(replica);
    const pushed = await pushTo(primary.url, '/rest/push/acme/app', {
      enableKeyCreation: true,
      data: [{ key: 'k', values: [{ context: '*', value: 'v' }] }],
    });
    expect(pushed.status).toBe(200);
    await eventually(
      'the replica current',
      async () => {
        const lag = await lagOf(replica.url);
        return lag !== null && lag !== 'unknown' && Number(lag) < 2 ? true : undefined;
      },
      20_000,
    );

    await primary.stop();
    const away = await eventually(
      'the lag growing',
      async () => {
        const lag = Number(await lagOf(replica.url));
        return lag >= 1.5 ? lag : undefined;
      },
      20_000,
    );
    fs.writeFileSync(clock, '-1h\n'); // the wall clock stepped back an hour
    await eventually('the clock stepped', async () => {
      const date = Date.parse((await fetch(`${replica.url}/healthz`)).headers.get('date') ?? '');
      return Date.now() - date > 3_000_000 ? true : undefined;
    });
    const after = Number(await lagOf(replica.url));
    expect(after).toBeGreaterThanOrEqual(away);
    expect(after).toBeLessThan(600);
  });
});
