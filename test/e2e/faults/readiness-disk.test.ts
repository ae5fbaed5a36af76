/**
 * `/readyz` on a disk that fills up: the repositories folder on a small tmpfs
 * of its own; filling it below the free-space floor turns readiness 503 naming the full disk,
 * without the folder's path, and freeing the space turns it back to 200. Skipped, with a message
 * saying why, where mounting a tmpfs is not permitted (tests usually run as root in CI here).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_FREE_BYTES } from '../../../src/http/routes/readiness.js';
import { cliOk, getJson, startTestServer, tempDir } from '../../support/harness.js';

const MiB = 1024 * 1024;
/** The tmpfs: a little above the floor, so a filler file of FILL crosses it. */
const SIZE = MIN_FREE_BYTES + 16 * MiB;
const FILL = 32 * MiB;

describe('GET /readyz on a disk that fills up', () => {
  let mount = '';
  let mounted = false;
  beforeAll(() => {
    mount = tempDir('cfghub-readyz-tmpfs-').path;
    mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE}`, 'tmpfs', mount]).status === 0;
    if (!mounted) console.log('[readiness] mount -t tmpfs not permitted: the full-disk readiness test was skipped');
  });
  afterAll(() => {
    if (mounted) spawnSync('umount', [mount]);
    fs.rmSync(mount, { recursive: true, force: true });
  });

  it('turns 503 naming the full disk, and 200 when space is freed (skipped where mounting a tmpfs is not permitted)', async (ctx) => {
    if (!mounted) ctx.skip();
    cliOk(mount, 'repo', 'create', 'disk/ready', '--context', 'Environment');
    const server = await startTestServer(mount);
    try {
      const ready = await getJson(server.url, '/readyz');
      expect(ready.status, ready.text).toBe(200);
      expect(ready.json).toEqual({ status: 'ready', problems: [], unreadable: [] });

      const filler = join(mount, 'filler');
      fs.writeFileSync(filler, Buffer.alloc(FILL, 1));
      const full = await getJson(server.url, '/readyz');
      expect(full.status).toBe(503);
      expect(full.json.status).toBe('unready');
      expect(full.json.problems).toEqual([
        expect.stringMatching(new RegExp(`^the disk is full: \\d+ MiB free, under ${MIN_FREE_BYTES / MiB} MiB$`)),
      ]);
      expect(full.text).not.toContain(mount);
      expect((await getJson(server.url, '/healthz')).status).toBe(200); // the process still answers

      fs.rmSync(filler);
      const freed = await getJson(server.url, '/readyz');
      expect(freed.status, freed.text).toBe(200);
    } finally {
      await server.close();
    }
  });
});
