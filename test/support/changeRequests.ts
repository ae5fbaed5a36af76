/**
 * Test support for change requests against a file's in-process server (serverForFile): the
 * command line run as a child process the test waits for, the repository's head read with git,
 * requests with a client or an admin token, and the values a context resolves to.
 */
import { expect } from 'vitest';
import { cliWithInput, git, gitdirOf, type FileServer } from './harness.js';
import { read } from './reads.js';

export interface CallAnswer {
  readonly status: number;
  /** The body parsed as JSON; undefined when empty. */
  readonly json: any;
  readonly etag: string | null;
}

/** The calls about `repo` on `fixture`'s server; `reader` gives the client token pulls read with. */
export function changeRequestCalls(fixture: FileServer, repo: string, reader: () => string) {
  const gitdir = () => gitdirOf(fixture.repos, repo);
  /** Made by the command line as a child process the test waits for, so the in-process server keeps serving: its output. */
  const made = async (...args: string[]): Promise<string> => {
    const result = await cliWithInput(fixture.repos, '', ...args);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout.trim();
  };
  /** A request with a client token (`Client-Token`) or an admin token (`Authorization: Bearer`). */
  const call = async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<CallAnswer> => {
    const auth: Record<string, string> = token.startsWith('cfgadm_')
      ? { Authorization: `Bearer ${token}` }
      : { 'Client-Token': token };
    const response = await fetch(`${fixture.server.url}${path}`, {
      method,
      headers: { ...auth, ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined, etag: response.headers.get('etag') };
  };
  return {
    made,
    gitdir,
    head: () => git(gitdir(), 'rev-parse', 'refs/heads/main').trim(),
    call,
    /** Approves, applies or closes change request `id`. */
    act: (token: string, id: number, action: string) => call('POST', `/rest/changes/${repo}/${id}/${action}`, token),
    /** Each key's value for `context`, as the reader's pull gives it. */
    pull: async (context: string): Promise<Record<string, unknown>> => {
      const answer = await read(fixture.server.url, `/rest/pull/${repo}`, {
        'Client-Token': reader(),
        Context: context,
      });
      expect(answer.status, answer.text).toBe(200);
      const properties = answer.json.properties as Record<string, { val: unknown }>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, value.val]));
    },
  };
}

/** A push element setting db.host for one context. */
export const hostAt = (context: string, value: string) => ({ key: 'db.host', values: [{ context, value }] });
