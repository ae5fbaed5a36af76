/**
 * Temporary folders under os.tmpdir(), all removed at the end of the run, or on Ctrl-C.
 *
 * They are removed only at the very end, never between scenarios: on ext4 with `discard`, a large
 * `rm -rf` slows file creation for tens of seconds (git-engine-notes §5), which would distort the
 * scenarios that follow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

export function makeTempFolder(prefix: string): string {
  const path = mkdtempSync(join(tmpdir(), `cfghub-bench-${prefix}-`));
  created.push(path);
  return path;
}

export function removeTempFolders(): void {
  while (created.length > 0) rmSync(created.pop()!, { recursive: true, force: true });
}
