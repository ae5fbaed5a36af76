/**
 * Who may read what: every access rule for every read
 * endpoint (pull, rawFile, info, keyData, export), in the token form (`/rest/<endpoint>`, the
 * token names the repository) and the path form (`/rest/<endpoint>/{account}/{repository}`);
 * bad names in the URL and bad headers. Every error is JSON without a stack trace or a path.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { expectJsonError, read, type ReadAnswer } from '../../support/reads.js';

/** Token-free pull on. */
const OPEN = 'acme/open';
/** Token-free pull off. */
const CLOSED = 'acme/closed';
/** Private, with token-free pull on: still never readable without its own token. */
const SECRET = 'acme/secret';
/** Private, token-free pull off. */
const HIDDEN = 'acme/hidden';
const REPOS = [OPEN, CLOSED, SECRET, HIDDEN];
const FLAGS: Record<string, string[]> = {
  [OPEN]: ['--token-free-pull'],
  [CLOSED]: [],
  [SECRET]: ['--private', '--token-free-pull'],
  [HIDDEN]: ['--private'],
};

const ENDPOINTS = ['pull', 'rawFile', 'info', 'keyData', 'export'] as const;
type Endpoint = (typeof ENDPOINTS)[number];
/** What each endpoint needs besides access, so that a 200 is possible. */
const NEEDS: Record<string, string> = { Context: 'Prod;web', File: 'who.txt', KeyName: 'who' };

const fixture = serverForFile();
/** A working token of each repository, by repository. */
const tokens: Record<string, string> = {};
/** A token of CLOSED revoked before the server started. */
let revoked: string;
/** Well-formed but never issued. */
const UNKNOWN_TOKEN = `cfg_${'A'.repeat(43)}`;

beforeAll(async () => {
  for (const repo of REPOS) {
    cliOk(
      fixture.repos,
      'repo',
      'create',
      repo,
      '--context',
      'Environment,Application',
      '--token-free-push',
      ...FLAGS[repo],
    );
    tokens[repo] = cliOk(fixture.repos, 'token', 'create', repo, '--name', 'reader').trim();
  }
  revoked = cliOk(fixture.repos, 'token', 'create', CLOSED, '--name', 'gone').trim();
  cliOk(fixture.repos, 'token', 'revoke', CLOSED, 'gone');
  for (const repo of REPOS) {
    // Each repository answers with its own name, so an answer tells which repository was read.
    const answer = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
      enableKeyCreation: true,
      data: [
        { key: 'who', readme: repo, values: [{ context: '*;*', value: repo }] },
        { file: 'who.txt', context: '*;*', content: 'I am ${ who }' },
      ],
    });
    expect(answer.status, reasonOf(answer)).toBe(200);
  }
});

/** Reads an endpoint, in the token form when `repo` is undefined. */
function get(
  endpoint: Endpoint,
  repo: string | undefined,
  token?: string,
  headers: Record<string, string> = NEEDS,
): Promise<ReadAnswer> {
  const path = repo === undefined ? `/rest/${endpoint}` : `/rest/${endpoint}/${repo}`;
  return read(fixture.server.url, path, { ...headers, ...(token !== undefined ? { 'Client-Token': token } : {}) });
}

/** Asserts a 200 that shows the content of `repo`. */
function expectRead(answer: ReadAnswer, endpoint: Endpoint, repo: string): void {
  expect(answer.status, answer.text).toBe(200);
  const name = repo.split('/')[1];
  switch (endpoint) {
    case 'pull':
      expect(answer.json.repo).toBe(name);
      expect(answer.json.properties.who.val).toBe(repo);
      break;
    case 'rawFile':
      expect(answer.text).toBe(`I am ${repo}`);
      break;
    case 'info':
      expect(answer.json).toMatchObject({ account: 'acme', repository: name });
      break;
    case 'keyData':
      expect(answer.json).toMatchObject({ key: 'who', readme: repo });
      break;
    case 'export':
      expect(answer.json.data[0]).toMatchObject({
        key: 'who',
        values: [{ context: '*;*', value: repo, active: true }],
      });
      break;
  }
}

const denied = (answer: ReadAnswer, status: number) => expectJsonError(answer, status, [fixture.repos]);

describe.each(ENDPOINTS)('%s in the token form', (endpoint) => {
  it('answers 401 without a token, and with an unknown, malformed or revoked one', async () => {
    expect(denied(await get(endpoint, undefined), 401)).toMatch(/Client-Token/);
    denied(await get(endpoint, undefined, UNKNOWN_TOKEN), 401);
    denied(await get(endpoint, undefined, 'not-a-token'), 401);
    expect(denied(await get(endpoint, undefined, revoked), 401)).toMatch(/revoked/);
  });

  it('reads the repository of a valid token, whatever its flags', async () => {
    for (const repo of REPOS) expectRead(await get(endpoint, undefined, tokens[repo]), endpoint, repo);
  });
});

describe.each(ENDPOINTS)('%s in the path form', (endpoint) => {
  it("answers 200 with the repository's own token, and 403 with another repository's", async () => {
    for (const repo of REPOS) {
      expectRead(await get(endpoint, repo, tokens[repo]), endpoint, repo);
      const other = tokens[repo === OPEN ? CLOSED : OPEN];
      denied(await get(endpoint, repo, other), 403);
    }
  });

  it('answers 401 with an unknown or revoked token, even where token-free pull is on', async () => {
    denied(await get(endpoint, OPEN, UNKNOWN_TOKEN), 401);
    denied(await get(endpoint, CLOSED, revoked), 401);
  });

  it('reads without a token only with --token-free-pull, and never a private repository', async () => {
    expectRead(await get(endpoint, OPEN), endpoint, OPEN);
    denied(await get(endpoint, CLOSED), 403);
    denied(await get(endpoint, SECRET), 401);
    denied(await get(endpoint, HIDDEN), 401);
  });

  it('answers 404 JSON for an unknown repository or account, with or without a token', async () => {
    denied(await get(endpoint, 'acme/nope'), 404);
    denied(await get(endpoint, 'nobody/open'), 404);
    denied(await get(endpoint, 'acme/nope', tokens[OPEN]), 404);
  });

  it('finds the repository without regard to case', async () => {
    expectRead(await get(endpoint, 'ACME/Open'), endpoint, OPEN);
  });

  it('answers 400 JSON for names that are not valid, and 404 JSON for paths that are no endpoint', async () => {
    for (const bad of [
      'bad..name/open',
      'acme/-open',
      'acme/bad%20name',
      'acme/open%2Fx',
      '..%2F..%2Fetc/passwd',
      'acme/%ZZ',
    ]) {
      denied(await read(fixture.server.url, `/rest/${endpoint}/${bad}`, NEEDS), 400);
    }
    for (const missing of ['acme', 'acme/open/extra']) {
      denied(await read(fixture.server.url, `/rest/${endpoint}/${missing}`, NEEDS), 404);
    }
  });
});

describe('a token revoked while the server runs', () => {
  it('stops working at once, in both forms', async () => {
    const token = cliOk(fixture.repos, 'token', 'create', OPEN, '--name', 'short-lived').trim();
    expectRead(await get('pull', undefined, token), 'pull', OPEN);
    expectRead(await get('export', OPEN, token), 'export', OPEN);
    expect(cli(fixture.repos, 'token', 'revoke', OPEN, 'short-lived').code).toBe(0);
    for (const endpoint of ENDPOINTS) {
      denied(await get(endpoint, undefined, token), 401);
      denied(await get(endpoint, OPEN, token), 401);
    }
  });
});

describe('bad headers', () => {
  const withContext = (context: string | undefined) => {
    const { Context: _, ...rest } = NEEDS;
    return context === undefined ? rest : { ...rest, Context: context };
  };

  it.each(['pull', 'rawFile'] as const)('%s answers 400 naming the problem with the Context', async (endpoint) => {
    for (const [repo, token] of [
      [OPEN, undefined],
      [undefined, tokens[CLOSED]],
    ] as const) {
      const problem = async (context: string | undefined) =>
        denied(await get(endpoint, repo, token, withContext(context)), 400);
      expect(await problem(undefined)).toMatch(/Context/);
      expect(await problem('Prod')).toMatch(/1 item.*Environment;Application|Environment;Application.*1 item/);
      expect(await problem('Prod;web;i1')).toMatch(/3 items/);
      expect(await problem('Prod;')).toMatch(/item 2.*empty|empty.*item 2/i);
      expect(await problem(';web')).toMatch(/item 1.*empty|empty.*item 1/i);
      expect(await problem('bad name;web')).toMatch(/item 1/);
      expect(await problem('Prod;we/b')).toMatch(/item 2/);
      expect(await problem('Prod;web-')).toMatch(/item 2/);
      // The same contexts written well are read.
      expect((await get(endpoint, repo, token, withContext('Prod;web'))).status).toBe(200);
      expect((await get(endpoint, repo, token, withContext(' Prod ; * '))).status).toBe(200);
    }
  });

  it.each(ENDPOINTS)(
    '%s answers 400 for a malformed Client-Version or another major version, and reads v1.x',
    async (endpoint) => {
      for (const version of ['junk', 'v2.0', '1.0', 'v1', 'v0.9', 'v2.1.0', 'v1.3.0.0']) {
        const message = denied(await get(endpoint, OPEN, undefined, { ...NEEDS, 'Client-Version': version }), 400);
        expect(message, version).toMatch(/Client-Version/);
      }
      expectRead(await get(endpoint, OPEN, undefined, { ...NEEDS, 'Client-Version': 'v1.7' }), endpoint, OPEN);
      expectRead(await get(endpoint, OPEN, undefined, { ...NEEDS, 'Client-Version': 'v1.3.0' }), endpoint, OPEN);
      expectRead(await get(endpoint, undefined, tokens[OPEN], { ...NEEDS, 'Client-Version': 'v1.0' }), endpoint, OPEN);
    },
  );
});
