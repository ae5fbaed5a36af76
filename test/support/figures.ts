/**
 * Test support: the figures of a reliability run (crashes survived, pushes checked, fuzz steps,
 * bad inputs tried), printed and kept in `dist/reliability/<name>.json` for the README.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const FOLDER = resolve(__dirname, '../../dist/reliability');

export function recordFigures(name: string, figures: Record<string, number | string>): void {
  mkdirSync(FOLDER, { recursive: true });
  const record = { name, at: new Date().toISOString(), ...figures };
  writeFileSync(join(FOLDER, `${name}.json`), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`[reliability] ${JSON.stringify(record)}`);
}
