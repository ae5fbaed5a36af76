/**
 * Dry runs (docs/schemas.md): `Dry-Run: true` on either push form runs everything the push runs
 * and writes nothing (git's refs and objects unchanged), answering what it would do; and what it
 * says each context would read is what the real push then makes each context read, pull by pull
 * (a property test over random pushes). The real server on loopback, real repositories, git.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cliOk,
  cliWithInput,
  gitdirOf,
  headOf,
  pushTo,
  reasonOf,
  runCommand,
  serverForFile,
} from '../../support/harness.js';
import { read } from '../../support/reads.js';
import { MAX_NAMED_CONTEXTS } from '../../../src/service/schemas/namedContexts.js';
import { diskState as stateOf, effectsBetween, readsOf as readsAt, type ContextEntry } from '../../support/dryRuns.js';

const REPO = 'acme/dry';
const fixture = serverForFile();

/**
 * A token made by the command line while the server runs in this process: run as a child process
 * the test waits for (cliOk would hold this process's event loop, and the server's with it).
 */
async function tokenMade(...args: string[]): Promise<string> {
  const made = await cliWithInput(fixture.repos, '', ...args);
  expect(made.code, made.stderr).toBe(0);
  return made.stdout.trim();
}

/** Every ref and every object file of the repository, as git and the disk show them. */
const diskState = (repo = REPO) => stateOf(gitdirOf(fixture.repos, repo));

function dryRun(body: unknown, headers: Record<string, string> = {}, path = `/rest/push/${REPO}`) {
  return pushTo(fixture.server.url, path, body, { 'Dry-Run': 'true', ...headers });
}

beforeAll(async () => {
  cliOk(
    fixture.repos,
    'repo',
    'create',
    REPO,
    '--context',
    'Environment,Application,Instance',
    '--token-free-push',
    '--token-free-pull',
  );
  const seed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    enableKeyCreation: true,
    data: [
      {
        key: 'db.port',
        vdt: 'Integer',
        values: [
          { context: '*;*;*', value: 5432 },
          { context: 'Production;Billing;node-7', value: 6432 },
        ],
      },
      {
        key: 'db.host',
        values: [
          { context: 'Production;*;*', value: 'db.prod' },
          { context: 'Staging;Web;node-1', value: 'db.stage' },
        ],
      },
      { file: 'conf/app.properties', context: '*;*;*', content: 'host=${ db.host }\nport=${ db.port }\n' },
    ],
  });
  expect(seed.status, reasonOf(seed)).toBe(200);
});

describe('Dry-Run: true', () => {
  it('answers what the push would change, context by context, and writes nothing', async () => {
    const state = diskState();
    const answer = await dryRun({
      data: [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db2.prod' }] }],
    });
    expect(answer.status, answer.body).toBe(200);
    expect(answer.json).toMatchObject({
      wouldCommit: true,
      outcome: 'applied',
      changed: { keys: ['db.host'], files: [] },
      contexts: { considered: 2, changed: 1, more: 0 },
    });
    expect(answer.json.contexts.listed).toEqual([
      {
        context: 'Production;Billing;node-7',
        keys: [{ key: 'db.host', before: { val: 'db.prod' }, after: { val: 'db2.prod' } }],
        files: [
          {
            path: 'conf/app.properties',
            before: { content: 'host=db.prod\nport=6432\n' },
            after: { content: 'host=db2.prod\nport=6432\n' },
          },
        ],
      },
    ]);
    expect(diskState()).toBe(state);
  });

  it('on the token form too, with a context the request lists', async () => {
    const token = await tokenMade('token', 'create', REPO, '--name', 'dry');
    const state = diskState();
    const answer = await dryRun(
      { data: [{ key: 'db.port', values: [{ context: '*;*;*', value: 5433 }] }] },
      { 'Client-Token': token, 'Dry-Run-Contexts': 'Development;Web;laptop' },
      '/rest/push',
    );
    expect(answer.status, answer.body).toBe(200);
    expect(answer.json.contexts.considered).toBe(3);
    expect(answer.json.contexts.listed.map((c: { context: string }) => c.context).sort()).toEqual([
      'Development;Web;laptop',
      'Staging;Web;node-1',
    ]);
    expect(diskState()).toBe(state);
  });

  it('a push that would be refused answers 200 with the refusal the push itself gives', async () => {
    const body = { data: [{ key: 'db.port', values: [{ context: '*;*;*', value: 'many' }] }] };
    const state = diskState();
    const answer = await dryRun(body);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ wouldCommit: false, outcome: 'refused' });
    expect(diskState()).toBe(state);
    const real = await pushTo(fixture.server.url, `/rest/push/${REPO}`, body);
    expect(real.status).toBe(304);
    expect(reasonOf(real)).toBe(answer.json.refusal);
  });

  it('a schema refusal is told by the dry run exactly as the push gives it', async () => {
    const schemas = { keys: [{ key: 'db.port', schema: { type: 'integer', minimum: 1000 } }] };
    const body = { schemas, data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 99 }] }] };
    const answer = await dryRun(body);
    expect(answer.json.outcome).toBe('refused');
    expect(answer.json.refusal).toContain('key db.port at Staging;*;*');
    expect(reasonOf(await pushTo(fixture.server.url, `/rest/push/${REPO}`, body))).toBe(answer.json.refusal);
  });

  it('more than 100 listed contexts is a 400 saying the limit, and nothing is written', async () => {
    const state = diskState();
    const many = Array.from({ length: 101 }, (_, i) => `Production;Web;node-${i}`).join(',');
    const answer = await dryRun({ data: [] }, { 'Dry-Run-Contexts': many });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toBe('a dry run lists at most 100 contexts');
    const hundred = await dryRun(
      { data: [{ key: 'db.port', values: [{ context: 'Staging;*;*', value: 6000 }] }] },
      { 'Dry-Run-Contexts': many.split(',').slice(0, 100).join(',') },
    );
    expect(hundred.status, hundred.body).toBe(200);
    expect(hundred.json.contexts.considered).toBe(102);
    expect(diskState()).toBe(state);
  });

  it(`a repository naming more than ${MAX_NAMED_CONTEXTS} contexts is a 409 saying so, and nothing is written`, async () => {
    const repo = 'acme/dry-crowded';
    await tokenMade(
      'repo',
      'create',
      repo,
      '--context',
      'Environment,Instance',
      '--token-free-push',
      '--token-free-pull',
    );
    // 101 keys of 100 values, each in a context of its own (a key takes a limited number of values).
    const data = Array.from({ length: 101 }, (_, k) => ({
      key: `instance.k${k}`,
      values: Array.from({ length: 100 }, (_, i) => ({ context: `Prod;n-${k * 100 + i}`, value: `${i}` })),
    }));
    const seed = await pushTo(fixture.server.url, `/rest/push/${repo}`, { enableKeyCreation: true, data });
    expect(seed.status, reasonOf(seed)).toBe(200);
    const state = diskState(repo);
    const answer = await dryRun(
      { data: [{ key: 'other', values: [{ context: '*;*', value: 'x' }] }], enableKeyCreation: true },
      {},
      `/rest/push/${repo}`,
    );
    expect(answer.status, answer.body).toBe(409);
    expect(answer.json.message).toBe(
      `the dry run cannot weigh this change: the repository names more than ${MAX_NAMED_CONTEXTS} contexts, more than the schema check and the dry run weigh`,
    );
    expect(diskState(repo)).toBe(state);
  }, 60_000);

  it('weighs each member of a context group a value names, as a pull of that member reads it', async () => {
    const repo = 'acme/dry-groups';
    await tokenMade(
      'repo',
      'create',
      repo,
      '--context',
      'Environment,Datacenter',
      '--token-free-push',
      '--token-free-pull',
      '--context-groups',
    );
    await tokenMade('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt', 'Dublin');
    const seed = await pushTo(fixture.server.url, `/rest/push/${repo}`, {
      enableKeyCreation: true,
      data: [
        {
          key: 'db.host',
          values: [
            { context: '*;*', value: 'global' },
            { context: 'Production;EU', value: 'eu-host' },
          ],
        },
      ],
    });
    expect(seed.status, reasonOf(seed)).toBe(200);
    const change = { data: [{ key: 'db.host', values: [{ context: 'Production;EU', value: 'eu2-host' }] }] };
    const state = diskState(repo);
    const answer = await dryRun(change, {}, `/rest/push/${repo}`);
    expect(answer.status, answer.body).toBe(200);
    expect(diskState(repo)).toBe(state);
    // The members as the group spells them (items are compared without regard to case).
    const members = ['Production;Dublin', 'Production;Frankfurt'];
    expect(answer.json.contexts.considered).toBe(2);
    expect(answer.json.contexts.listed.map((c: { context: string }) => c.context).sort()).toEqual(members);
    const path = `/rest/pull/${repo}`;
    const before = await Promise.all(members.map((c) => readsAt(fixture.server.url, path, c)));
    const real = await pushTo(fixture.server.url, path.replace('pull', 'push'), change);
    expect(real.status, reasonOf(real)).toBe(200);
    for (const [i, context] of members.entries()) {
      const said = answer.json.contexts.listed.find((c: { context: string }) => c.context === context);
      const effects = effectsBetween(before[i], await readsAt(fixture.server.url, path, context));
      expect({ keys: said.keys, files: said.files }).toEqual(effects);
    }
  });

  it('a listed context that is not fully specified is a 400', async () => {
    const answer = await dryRun({ data: [] }, { 'Dry-Run-Contexts': 'Production;*;*' });
    expect(answer.status).toBe(400);
    expect(answer.json.message).toMatch(/name an item at every level/);
  });
});

/** The `cfghub` command against the server, as a child process this test waits for. */
function cfghub(args: string[], input = '') {
  return runCommand(args, { input, env: { ...process.env, CFGHUB_SERVER: fixture.server.url } });
}

describe('cfghub push --dry-run, set --dry-run, unset --dry-run', () => {
  const move = { data: [{ key: 'db.host', values: [{ context: 'Production;*;*', value: 'db2.prod' }] }] };

  it('prints what each context would read instead, writes nothing, and --json is the server answer', async () => {
    const state = diskState();
    const head = headOf(fixture.repos, REPO);
    const shown = await cfghub(['push', REPO, '-', '--dry-run'], JSON.stringify(move));
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toBe(
      [
        `the push would commit on head ${head.slice(0, 12)}, changing:`,
        '  keys: db.host',
        '1 of 2 contexts would read something else:',
        '',
        'Production;Billing;node-7',
        '  ~ db.host: db.prod -> db2.prod',
        '  ~ file conf/app.properties',
        '      - host=db.prod',
        '      + host=db2.prod',
        '',
      ].join('\n'),
    );
    const json = await cfghub(['push', REPO, '-', '--dry-run', '--json'], JSON.stringify(move));
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await dryRun(move)).json);
    expect(diskState()).toBe(state);

    const set = await cfghub([
      'set',
      REPO,
      'db.port',
      '7000',
      '--context',
      'Staging;*;*',
      '-m',
      'staging port',
      '--dry-run',
      '--contexts',
      'Staging;Billing;node-2',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('2 of 3 contexts would read something else:\n');
    expect(set.stdout).toContain('\nStaging;Billing;node-2\n  ~ db.port: 5432 -> 7000\n');
    expect(set.stdout).toContain('\nStaging;Web;node-1\n  ~ db.port: 5432 -> 7000\n');
    const unset = await cfghub(['unset', REPO, 'db.port', '--context', '*;*;*', '-m', 'no port', '--dry-run']);
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stdout).toContain('\nStaging;Web;node-1\n  - db.port (was 5432)\n');
    expect(diskState()).toBe(state);
  });

  it("a push that would be refused prints the push's own reason and exits 1; the push itself then commits", async () => {
    const state = diskState();
    const refused = await cfghub(['set', REPO, 'db.port', 'many', '--context', '*;*;*', '-m', 'bad', '--dry-run']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'cfghub: the push would be refused: data[0].values[0] key db.port: value is not an Integer\n',
    );
    expect(diskState()).toBe(state);

    const pushed = await cfghub(['push', REPO, '-', '-m', 'Move the database'], JSON.stringify(move));
    expect(pushed.code, pushed.stderr).toBe(0);
    expect(pushed.stdout.trim()).toBe(headOf(fixture.repos, REPO));
    const pulled = await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: 'Production;Billing;node-7' });
    expect(pulled.json.properties['db.host'].val).toBe('db2.prod');
    const again = await cfghub(['push', REPO, '-', '--dry-run'], JSON.stringify(move));
    expect(again.stdout).toBe(`the push would change nothing (head ${pushed.stdout.slice(0, 12)})\n`);
  });
});

/** What a pull shows of each key and file for a context. */
const readsOf = (context: string) => readsAt(fixture.server.url, '/rest/pull/acme/prop', context);

const ENVS = ['Production', 'Staging'];
const APPS = ['Billing', 'Web'];
const KEYS = ['k0', 'k1', 'k2'];
const STORED = ['*;*', 'Production;*', '*;Web', ...ENVS.flatMap((e) => APPS.map((a) => `${e};${a}`))];

describe('a dry run against the push it previews', () => {
  it('says, context by context, what each named context reads after the real push', async () => {
    await tokenMade(
      'repo',
      'create',
      'acme/prop',
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
    const file = { file: 'conf/all.txt', context: '*;*', content: KEYS.map((k) => `${k}=\${ ${k} }`).join('\n') };
    const change = fc.record({
      key: fc.constantFrom(...KEYS),
      context: fc.constantFrom(...STORED),
      value: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: undefined }),
    });
    /** The values stored, as `key@context`: the model of the repository the pushes below make. */
    const stored = new Set<string>();
    const fullySpecified = () =>
      new Set([...stored].map((entry) => entry.split('@')[1]).filter((context) => !context.includes('*')));
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 4 }), fc.boolean(), async (changes, withFile) => {
        const data: unknown[] = changes.map((c) =>
          c.value === undefined
            ? { key: c.key, values: [{ context: c.context, opp: 'delete' }] }
            : { key: c.key, values: [{ context: c.context, value: c.value }] },
        );
        if (withFile) data.push(file);
        const body = { enableKeyCreation: true, data };
        const preview = await pushTo(fixture.server.url, '/rest/push/acme/prop', body, { 'Dry-Run': 'true' });
        expect(preview.status, preview.body).toBe(200);
        // The contexts the repository names: the fully specified ones of its values, before or after.
        const namedBefore = fullySpecified();
        const all = ENVS.flatMap((e) => APPS.map((a) => `${e};${a}`));
        const before = new Map(await Promise.all(all.map(async (c) => [c, await readsOf(c)] as const)));
        const real = await pushTo(fixture.server.url, '/rest/push/acme/prop', body);
        if (preview.json.outcome === 'refused') {
          expect(real.status).toBe(304);
          return;
        }
        expect(real.status, reasonOf(real)).toBe(200);
        for (const c of changes) {
          if (c.value === undefined) stored.delete(`${c.key}@${c.context}`);
          else stored.add(`${c.key}@${c.context}`);
        }
        const named = [...new Set([...namedBefore, ...fullySpecified()])];
        if (preview.json.outcome === 'unchanged')
          expect(preview.json.contexts).toEqual({ considered: 0, changed: 0, listed: [], more: 0 });
        else expect(preview.json.contexts.considered).toBe(named.length);
        const listed = new Map<string, ContextEntry>(
          preview.json.contexts.listed.map((c: { context: string }) => [c.context, c]),
        );
        let changed = 0;
        for (const context of named) {
          const was = before.get(context)!;
          const is = await readsOf(context);
          const said = listed.get(context);
          const effects = effectsBetween(was, is);
          if (!effects) {
            expect(said, `context ${context}`).toBeUndefined();
            continue;
          }
          changed++;
          expect({ context, keys: said?.keys, files: said?.files }).toEqual({ context, ...effects });
        }
        expect(preview.json.contexts.changed).toBe(changed);
      }),
      { numRuns: 15 },
    );
  });
});

describe('a dry run and secured values', () => {
  const SECURED = 'acme/dry-secured';
  const PASSWORD = 'dry-run-group-password';
  const SECRET = 'Pr0d-s3cret-before';
  const NEXT_SECRET = 'Pr0d-s3cret-after';

  beforeAll(async () => {
    cliOk(
      fixture.repos,
      'repo',
      'create',
      SECURED,
      '--context',
      'Environment,Application',
      '--token-free-push',
      '--token-free-pull',
    );
    const group = await cliWithInput(fixture.repos, `${PASSWORD}\n`, 'group', 'create', SECURED, 'secrets');
    expect(group.code, group.stderr).toBe(0);
    const seed = await pushTo(fixture.server.url, `/rest/push/${SECURED}`, {
      enableKeyCreation: true,
      data: [
        {
          key: 'db.password',
          securityGroup: 'secrets',
          password: PASSWORD,
          values: [{ context: 'Prod;web', value: SECRET }],
        },
        { key: 'db.host', values: [{ context: '*;*', value: 'db-1' }] },
        { file: 'app.conf', context: 'Prod;web', content: 'password=${ db.password }\nhost=${ db.host }\n' },
      ],
    });
    expect(seed.status, reasonOf(seed)).toBe(200);
  });

  it('shows a secret, in a rendered file too, only to a request that opens its group (here by the group password a change to it carries), as a pull does', async () => {
    const hostChange = { data: [{ key: 'db.host', values: [{ context: '*;*', value: 'db-2' }] }] };
    const sealed = await dryRun(hostChange, {}, `/rest/push/${SECURED}`);
    expect(sealed.status, reasonOf(sealed)).toBe(200);
    expect(sealed.json.contexts.listed).toHaveLength(1);
    expect(sealed.body).toContain('host=db-2');
    expect(sealed.body).not.toContain(SECRET);
    const pulled = await read(fixture.server.url, `/rest/pull/${SECURED}`, { Context: 'Prod;web' });
    expect(pulled.text).not.toContain(SECRET);

    // Changing the secret takes the group's password, which opens it: before and after in the clear.
    const secretChange = await dryRun(
      { data: [{ key: 'db.password', password: PASSWORD, values: [{ context: 'Prod;web', value: NEXT_SECRET }] }] },
      {},
      `/rest/push/${SECURED}`,
    );
    expect(secretChange.status, reasonOf(secretChange)).toBe(200);
    expect(secretChange.json.contexts.listed[0].keys).toEqual([
      { key: 'db.password', before: { val: SECRET }, after: { val: NEXT_SECRET } },
    ]);
    expect(secretChange.json.contexts.listed[0].files).toEqual([
      {
        path: 'app.conf',
        before: { content: `password=${SECRET}\nhost=db-1\n` },
        after: { content: `password=${NEXT_SECRET}\nhost=db-1\n` },
      },
    ]);
    // Nothing written: the secret is still the first one.
    const still = await read(fixture.server.url, `/rest/pull/${SECURED}`, {
      Context: 'Prod;web',
      'Security-Profile-Auth': JSON.stringify({ secrets: PASSWORD }),
    });
    expect(still.text).toContain(SECRET);
    expect(still.text).not.toContain(NEXT_SECRET);
  });
});
