/**
 * Test support for the read endpoints: GETs that keep the raw text, checks
 * that an error answer is the API's JSON error (no stack trace, no filesystem path),
 * a second `cfghub serve` process, and commits made with plain git's plumbing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { git, jsonOrUndefined } from './harness.js';

export interface ReadAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  readonly json: any;
}

/** GETs a path; header values are sent as given (an empty object sends none). */
export async function read(url: string, path: string, headers: Record<string, string> = {}): Promise<ReadAnswer> {
  const response = await fetch(`${url}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: jsonOrUndefined(text) };
}

/** A sample without labels from the server's /metrics, by its name (and labels as written, e.g. `x_total{result="miss"}`). */
export async function metricOf(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

/** Things no error body may hold: a stack frame or a filesystem path. */
const LEAKS = [
  /\bat [^\s]+ \(/,
  /\n\s+at /,
  /\/tmp\//,
  /node_modules/,
  /\.git\b\//,
  /\/work\//,
  /\.ts:\d+/,
  /\.js:\d+/,
];

/**
 * Asserts an error answer of the API: the status, a JSON body `{error, message}` with
 * non-empty texts, and nothing in it that looks like a stack trace or a path on disk (`extraPaths`:
 * folders of this test, which must not show either). Returns the message.
 */
export function expectJsonError(answer: ReadAnswer, status: number, extraPaths: readonly string[] = []): string {
  expect({ status: answer.status, body: answer.text }).toMatchObject({ status });
  expect(answer.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(answer.json).toBeTypeOf('object');
  expect(answer.json.error).toBeTypeOf('string');
  expect(answer.json.error.length).toBeGreaterThan(0);
  // One code per kind of problem: every malformed request is bad_request, whoever found it.
  if (status === 400) expect(answer.json.error).toBe('bad_request');
  expect(answer.json.message).toBeTypeOf('string');
  expect(answer.json.message.length).toBeGreaterThan(0);
  for (const leak of LEAKS) expect(answer.text).not.toMatch(leak);
  for (const path of extraPaths) expect(answer.text).not.toContain(path);
  return answer.json.message as string;
}

/** A second `cfghub serve` process on the same repositories folder. */
export { startServerProcess } from './serverProcess.js';

/** The path of a key's document in the tree: keys/<first two hex digits of sha1(lower-cased name)>/<name>.yaml. */
export function keyPath(key: string): string {
  const id = key.toLowerCase();
  return `keys/${createHash('sha1').update(id).digest('hex').slice(0, 2)}/${id}.yaml`;
}

/**
 * Commits with plain git's plumbing (read-tree, hash-object, update-index, write-tree, commit-tree,
 * update-ref against the old head): sets the files of `changes` (tree path → content) on top of
 * the head. `date` sets the author and committer time (git's `@<seconds> +0000` form). Returns
 * the new commit id.
 */
export function plainGitCommit(
  gitdir: string,
  changes: Record<string, string>,
  message: string,
  date?: number,
): string {
  const scratch = mkdtempSync(join(tmpdir(), 'cfghub-plain-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GIT_DIR: gitdir,
    GIT_INDEX_FILE: join(scratch, 'index'),
    GIT_AUTHOR_NAME: 'Plain Git',
    GIT_AUTHOR_EMAIL: 'plain@example.com',
    GIT_COMMITTER_NAME: 'Plain Git',
    GIT_COMMITTER_EMAIL: 'plain@example.com',
    ...(date !== undefined ? { GIT_AUTHOR_DATE: `@${date} +0000`, GIT_COMMITTER_DATE: `@${date} +0000` } : {}),
  };
  const run = (...args: string[]) =>
    execFileSync('git', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    const head = run('rev-parse', 'refs/heads/main');
    run('read-tree', head);
    let n = 0;
    for (const [path, content] of Object.entries(changes)) {
      const file = join(scratch, `blob-${n++}`);
      writeFileSync(file, content);
      const blob = run('hash-object', '-w', file);
      run('update-index', '--add', '--cacheinfo', `100644,${blob},${path}`);
    }
    const tree = run('write-tree');
    const commit = run('commit-tree', tree, '-p', head, '-m', message);
    run('update-ref', 'refs/heads/main', commit, head);
    return commit;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A key's YAML document at the head, as git shows it. */
export function keyYaml(gitdir: string, key: string): string {
  return git(gitdir, 'show', `refs/heads/main:${keyPath(key)}`);
}

/** The committer time of a commit, in seconds since the epoch. */
export function commitTime(gitdir: string, commit: string): number {
  return Number(git(gitdir, 'log', '-1', '--format=%ct', commit).trim());
}

/** `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch. */
export function isoOf(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** The same instant written with a `+hh:mm` offset: `2026-01-01T14:00:00+02:00` for 12:00Z. */
export function isoWithOffset(seconds: number, offsetMinutes: number): string {
  const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export const ISO_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/** Waits until the wall clock is in a later second than `seconds` (so the next commit's time differs). */
export async function nextSecondAfter(seconds: number): Promise<void> {
  while (Math.floor(Date.now() / 1000) <= seconds) await new Promise((resolve) => setTimeout(resolve, 50));
}
