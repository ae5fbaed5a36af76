/**
 * Rewrites only the part of README.md between `<!-- bench:start -->` and `<!-- bench:end -->`.
 * Everything else in the README belongs to other people and is left byte for byte as it is.
 * Without the markers, a `## Performance` section holding them is appended (or, without a README,
 * becomes the whole file), its heading outside the markers so later runs keep it.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

export const README = fileURLToPath(new URL('../README.md', import.meta.url));

export function withBenchSection(readme: string | undefined, body: string): string {
  const block = `${START}\n${body.trimEnd()}\n${END}`;
  if (readme === undefined) return `## Performance\n\n${block}\n`;
  const start = readme.indexOf(START);
  const end = start < 0 ? -1 : readme.indexOf(END, start + START.length);
  if (start >= 0 && end >= 0) return readme.slice(0, start) + block + readme.slice(end + END.length);
  const separator = readme.length === 0 || readme.endsWith('\n\n') ? '' : readme.endsWith('\n') ? '\n' : '\n\n';
  return `${readme}${separator}## Performance\n\n${block}\n`;
}

/** Reads, rewrites and replaces the README in one go (temporary file and rename, never a half-written README). */
export function updateReadme(body: string, path = README): void {
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  const temporary = `${path}.bench-${process.pid}`;
  writeFileSync(temporary, withBenchSection(current, body));
  renameSync(temporary, path);
}
