/**
 * Where the built command is, and temporary folders: for test support that also runs outside
 * vitest (the HA bench starts its clusters with haCluster.ts), so nothing here imports vitest.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/cli/main.cjs');

export function tempDir(prefix = 'cfghub-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
