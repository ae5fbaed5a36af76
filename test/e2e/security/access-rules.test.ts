/**
 * Access rules and read-only tokens end to end: rule sets made with `cfghub rules`,
 * tokens assigned with `token create --rules`, checked on push, revert and restore by the real
 * server on real bare repositories; every rule change is a commit that git shows and revert undoes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, cliOk, cliWithInput, git, gitdirOf, pushTo, reasonOf, serverForFile } from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const LEVELS = 'Environment,Datacenter';
const fixture = serverForFile();
let seq = 0;

/** A repository with access controls on and an open token-free push, so the tests can seed it. */
function newRepository(...extra: string[]): string {
  const repo = `acme/rules${++seq}`;
  cliOk(
    fixture.repos,
    'repo',
    'create',
    repo,
    '--context',
    LEVELS,
    '--access-controls',
    '--token-free-pull',
    '--token-free-push',
    ...extra,
  );
  return repo;
}

const value = (key: string, context: string, val: string) => ({ key, values: [{ context, value: val }] });

async function push(repo: string, data: unknown[], token?: string) {
  const headers: Record<string, string> = token ? { 'Client-Token': token } : {};
  return pushTo(
    fixture.server.url,
    token ? '/rest/push' : `/rest/push/${repo}`,
    { enableKeyCreation: true, data },
    headers,
  );
}

/**
 * The CLI run without blocking this process (a blocked event loop lets the server's keep-alive
 * timers and the client's race); fails the test when the command fails.
 */
async function run(...args: string[]): Promise<string> {
  const result = await cliWithInput(fixture.repos, '', ...args);
  if (result.code !== 0) throw new Error(`cfghub ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

function rule(repo: string, set: string, ...args: string[]): Promise<string> {
  return run('rules', 'add', repo, set, ...args);
}

async function tokenFor(repo: string, ...args: string[]): Promise<string> {
  return (await run('token', 'create', repo, ...args)).trim();
}

async function pull(repo: string, context: string) {
  return (await read(fixture.server.url, `/rest/pull/${repo}`, { Context: context })).json.properties;
}

describe('the team lead case: Development values of payments.* keys only', () => {
  let repo: string;
  let token: string;
  beforeAll(async () => {
    repo = newRepository();
    await run('rules', 'create', repo, 'payments');
    await rule(repo, 'payments', 'value', 'DoesNotContain', 'Development', '--can-edit', 'false');
    await rule(repo, 'payments', 'key', 'StartsWith', 'payments.', '--can-edit', 'true');
    token = await tokenFor(repo, '--rules', 'payments');
    expect(
      (await push(repo, [value('payments.url', 'Production;*', 'p0'), value('other.url', 'Development;*', 'o0')]))
        .status,
    ).toBe(200);
  });

  it('refuses Production with 304 naming the element, the rule and the set, and changes nothing', async () => {
    const head = git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
    const answer = await push(repo, [value('payments.url', 'Production;*', 'p1')], token);
    expect(answer.status).toBe(304);
    const reason = reasonOf(answer);
    expect(reason).toMatch(/^You do not have write access for specified context/);
    expect(reason).toContain('key payments.url at Production;*');
    expect(reason).toContain('rule 1 (value DoesNotContain Development, canEdit false) of rule set payments');
    expect(git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim()).toBe(head);
  });

  it('accepts Development for payments.* keys', async () => {
    expect((await push(repo, [value('payments.url', 'Development;*', 'd1')], token)).status).toBe(200);
    expect((await pull(repo, 'Development;eu1'))['payments.url'].val).toBe('d1');
  });

  it('refuses a key no rule allows (unmatchedEditable false), naming that no rule matched', async () => {
    const answer = await push(repo, [value('other.url', 'Development;*', 'o1')], token);
    expect(answer.status).toBe(304);
    expect(reasonOf(answer)).toContain('no rule of rule set payments matches, and its unmatchedEditable is false');
  });

  it('refuses a whole push when one element is denied', async () => {
    const answer = await push(
      repo,
      [value('payments.a', 'Development;*', 'x'), value('payments.b', 'Production;*', 'y')],
      token,
    );
    expect(answer.status).toBe(304);
    expect((await pull(repo, 'Development;eu1'))['payments.a']).toBeUndefined();
  });

  it('explains, for the token, whether it could change a value and which rule decides', async () => {
    const prod = await read(fixture.server.url, `/rest/explain/${repo}`, {
      Context: 'Production;eu1',
      KeyName: 'payments.url',
      'Client-Token': token,
    });
    expect(prod.status, prod.text).toBe(200);
    expect(prod.json.write).toMatchObject({ ruleSet: 'payments', canChange: false, rule: 1 });
    expect(prod.json.write.decidedBy).toContain('value DoesNotContain Development');
    const dev = await read(fixture.server.url, `/rest/explain/${repo}`, {
      Context: 'Development;eu1',
      KeyName: 'payments.url',
      'Client-Token': token,
    });
    expect(dev.json.write).toMatchObject({ canChange: true, rule: 2 });
    expect(dev.json.resolved.context).toBe('Development;*');
    expectJsonError(await read(fixture.server.url, `/rest/explain/${repo}`, { Context: 'Production;eu1' }), 400);
  });

  it('gives a token without a rule set full access', async () => {
    const full = await tokenFor(repo);
    expect((await push(repo, [value('other.url', 'Production;*', 'o2')], full)).status).toBe(200);
  });

  it('ignores the rules when access controls are off, and applies them again when on (repo set)', async () => {
    await run('repo', 'set', repo, '--access-controls', 'false');
    expect((await push(repo, [value('payments.url', 'Production;*', 'p2')], token)).status).toBe(200);
    await run('repo', 'set', repo, '--access-controls', 'true');
    expect((await push(repo, [value('payments.url', 'Production;*', 'p3')], token)).status).toBe(304);
  });
});

describe('rule semantics, case by case', () => {
  let repo: string;
  beforeAll(() => {
    repo = newRepository();
  });

  /** A fresh set with these rules (each `[target, match, text, canEdit]`) and a token of it. */
  async function setWith(
    name: string,
    rules: [string, string, string, boolean][],
    switches: string[] = [],
  ): Promise<string> {
    await run('rules', 'create', repo, name, ...switches);
    for (const [target, match, text, canEdit] of rules)
      await rule(repo, name, target, match, text, '--can-edit', String(canEdit));
    return await tokenFor(repo, '--rules', name);
  }

  const allowed = async (token: string, key: string, context: string) =>
    (await push(repo, [value(key, context, `v${Math.random()}`)], token)).status === 200;

  it('matches keys by Is, StartsWith, EndsWith and Contains, without regard to case', async () => {
    const is = await setWith('is', [['key', 'Is', 'db.URL', true]]);
    expect(await allowed(is, 'DB.url', '*;*')).toBe(true);
    expect(await allowed(is, 'db.url2', '*;*')).toBe(false);
    const starts = await setWith('starts', [['key', 'StartsWith', 'db.', true]]);
    expect(await allowed(starts, 'db.host', '*;*')).toBe(true);
    expect(await allowed(starts, 'xdb.host', '*;*')).toBe(false);
    const ends = await setWith('ends', [['key', 'EndsWith', '.port', true]]);
    expect(await allowed(ends, 'db.port', '*;*')).toBe(true);
    expect(await allowed(ends, 'db.ports', '*;*')).toBe(false);
    const contains = await setWith('contains', [['key', 'Contains', 'secret', true]]);
    expect(await allowed(contains, 'a.SECRET.b', '*;*')).toBe(true);
    expect(await allowed(contains, 'a.secre.b', '*;*')).toBe(false);
  });

  it('matches values by Resolves and DoesNotResolve (a * in the rule is any item)', async () => {
    const resolves = await setWith('resolves', [['value', 'Resolves', 'Production;*', true]]);
    expect(await allowed(resolves, 'k', 'Production;eu1')).toBe(true);
    expect(await allowed(resolves, 'k', '*;eu1')).toBe(true); // a wildcard value resolves for Production too
    expect(await allowed(resolves, 'k', 'Development;eu1')).toBe(false);
    const not = await setWith('notresolves', [['value', 'DoesNotResolve', 'Production;*', true]]);
    expect(await allowed(not, 'k', 'Development;eu1')).toBe(true);
    expect(await allowed(not, 'k', 'Production;eu1')).toBe(false);
  });

  it('matches values by ContainsAny, ContainsAll and DoesNotContain', async () => {
    const any = await setWith('any', [['value', 'ContainsAny', 'Test,Development', true]]);
    expect(await allowed(any, 'k', 'Test;*')).toBe(true);
    expect(await allowed(any, 'k', 'Production;*')).toBe(false);
    const all = await setWith('all', [['value', 'ContainsAll', 'Production,eu1', true]]);
    expect(await allowed(all, 'k', 'Production;eu1')).toBe(true);
    expect(await allowed(all, 'k', 'Production;us1')).toBe(false);
    const none = await setWith('none', [['value', 'DoesNotContain', 'Production', true]]);
    expect(await allowed(none, 'k', 'Test;eu1')).toBe(true);
    expect(await allowed(none, 'k', 'Production;eu1')).toBe(false);
  });

  it('decides by the first matching rule in priority order, and rules move', async () => {
    const token = await setWith('order', [
      ['key', 'StartsWith', 'app.', true],
      ['key', 'Is', 'app.locked', false],
    ]);
    expect(await allowed(token, 'app.locked', '*;*')).toBe(true); // rule 1 matches first
    await run('rules', 'move', repo, 'order', '2', '1');
    expect(await allowed(token, 'app.locked', '*;*')).toBe(false);
    expect(await allowed(token, 'app.other', '*;*')).toBe(true);
    await run('rules', 'delete', repo, 'order', '1');
    expect(await allowed(token, 'app.locked', '*;*')).toBe(true);
  });

  it('with stopOnFirstMatch false, any matching rule that denies decides', async () => {
    const token = await setWith(
      'all-rules',
      [
        ['key', 'StartsWith', 'app.', true],
        ['value', 'ContainsAny', 'Production', false],
      ],
      ['--stop-on-first-match', 'false'],
    );
    expect(await allowed(token, 'app.x', 'Test;*')).toBe(true);
    const answer = await push(repo, [value('app.x', 'Production;*', 'p')], token);
    expect(reasonOf(answer)).toContain('rule 2 (value ContainsAny Production, canEdit false) of rule set all-rules');
    await run('rules', 'set', repo, 'all-rules', '--stop-on-first-match', 'true');
    expect(await allowed(token, 'app.x', 'Production;*')).toBe(true);
  });

  it('with unmatchedEditable true, what no rule matches may be changed', async () => {
    const token = await setWith('open', [['key', 'Is', 'frozen', false]], ['--unmatched-editable', 'true']);
    expect(await allowed(token, 'anything', 'Production;*')).toBe(true);
    expect(await allowed(token, 'frozen', 'Production;*')).toBe(false);
    await run('rules', 'set', repo, 'open', '--unmatched-editable', 'false');
    expect(await allowed(token, 'anything', 'Production;*')).toBe(false);
  });

  it('refuses deleting a set a token is assigned to, naming the token, and a token of an unknown set', () => {
    const refused = cli(fixture.repos, 'rules', 'delete', repo, 'open');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('rule set open is assigned to token');
    expect(cli(fixture.repos, 'token', 'create', repo, '--rules', 'nosuch').stderr).toContain('has no rule set nosuch');
  });
});

describe('revert and restore follow the rules, and rule changes are history', () => {
  it('refuses a revert and a restore that would change a denied element (403), allows them otherwise', async () => {
    const repo = newRepository();
    await run('rules', 'create', repo, 'dev');
    await rule(repo, 'dev', 'value', 'ContainsAny', 'Development', '--can-edit', 'true');
    const token = await tokenFor(repo, '--rules', 'dev');
    expect((await push(repo, [value('k', 'Production;*', 'p0')])).status).toBe(200);
    const prod = (await push(repo, [value('k', 'Production;*', 'p1')])).etag!.replace(/"/g, '');
    const dev = (await push(repo, [value('k', 'Development;*', 'd1')], token)).etag!.replace(/"/g, '');
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${fixture.server.url}${path}`, { method: 'POST', headers: { ...headers, 'Client-Token': token } });
    const deniedRevert = await post('/rest/revert', { Commit: prod });
    expect(deniedRevert.status).toBe(403);
    expect((await deniedRevert.json()).message).toContain('key k at Production;*');
    expect((await post('/rest/revert', { Commit: dev })).status).toBe(200);
    expect((await push(repo, [value('k', 'Development;*', 'd2')], token)).status).toBe(200);
    // Restoring the Production push's state removes only the Development value: allowed.
    expect((await post('/rest/restore', { To: prod })).status).toBe(200);
    expect((await pull(repo, 'Development;eu1')).k).toBeUndefined();
    expect((await pull(repo, 'Production;eu1')).k.val).toBe('p1');
    const root = git(gitdirOf(fixture.repos, repo), 'rev-list', '--max-parents=0', 'refs/heads/main').trim();
    const refused = await post('/rest/restore', { To: root });
    expect(refused.status).toBe(403);
    expect((await refused.json()).message).toContain('rule set dev');
  });

  it('shows each rule change as a commit of access-rules.yaml, undone by revert', async () => {
    const repo = newRepository();
    const gitdir = gitdirOf(fixture.repos, repo);
    await run('rules', 'create', repo, 'team');
    await rule(repo, 'team', 'key', 'Is', 'a', '--can-edit', 'true');
    const added = git(gitdir, 'rev-parse', 'refs/heads/main').trim();
    expect(git(gitdir, 'log', '-1', '--format=%s', added).trim()).toBe('Add a rule to rule set team');
    expect(git(gitdir, 'show', `${added}:access-rules.yaml`)).toContain('key: a');
    const history = await read(fixture.server.url, `/rest/history/${repo}`, {});
    expect(history.json.commits[0].id).toBe(added);
    const reverted = await fetch(`${fixture.server.url}/rest/revert/${repo}`, {
      method: 'POST',
      headers: { Commit: added },
    });
    expect(reverted.status, await reverted.clone().text()).toBe(200);
    expect(git(gitdir, 'show', 'refs/heads/main:access-rules.yaml')).not.toContain('key: a');
    expect(JSON.parse(await run('rules', 'list', repo))[0].rules).toEqual([]);
  });

  it('refuses a token of a rule set reverting a change of the rules (403)', async () => {
    const repo = newRepository();
    await run('rules', 'create', repo, 'team', '--unmatched-editable', 'true');
    const token = await tokenFor(repo, '--rules', 'team');
    await rule(repo, 'team', 'key', 'Is', 'a', '--can-edit', 'false');
    const change = git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
    const answer = await fetch(`${fixture.server.url}/rest/revert`, {
      method: 'POST',
      headers: { Commit: change, 'Client-Token': token },
    });
    expect(answer.status).toBe(403);
  });
});

describe('a change of the context groups is judged by the contexts whose answers it changes', () => {
  /** Group EU = Frankfurt, Dublin, Paris; Labs = Lab1, Lab2 used by Development only; a token that may change Development values only. */
  async function groupsCase() {
    const repo = newRepository('--context-groups');
    await run('context-group', 'create', repo, 'Datacenter', 'EU', 'Frankfurt', 'Dublin', 'Paris');
    await run('context-group', 'create', repo, 'Datacenter', 'Labs', 'Lab1', 'Lab2');
    expect(
      (
        await push(repo, [
          value('url', 'Production;EU', 'eu-prod'),
          value('url', 'Production;*', 'global'),
          value('lab', 'Development;Labs', 'lab-dev'),
        ])
      ).status,
    ).toBe(200);
    await run('rules', 'create', repo, 'team');
    await rule(repo, 'team', 'value', 'DoesNotContain', 'Development', '--can-edit', 'false');
    await rule(repo, 'team', 'value', 'ContainsAny', 'Development', '--can-edit', 'true');
    const token = await tokenFor(repo, '--rules', 'team');
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${fixture.server.url}${path}`, { method: 'POST', headers: { ...headers, 'Client-Token': token } });
    const head = () => git(gitdirOf(fixture.repos, repo), 'rev-parse', 'refs/heads/main').trim();
    return { repo, post, head };
  }

  it('refuses restore and revert of a member leaving a group when the member reads a value the token may not change', async () => {
    const { repo, post, head } = await groupsCase();
    const before = head();
    await run('context-group', 'remove', repo, 'Datacenter', 'EU', 'Paris');
    const removal = head();
    expect((await pull(repo, 'Production;Paris')).url.val).toBe('global');
    for (const [path, headers] of [
      ['/rest/restore', { To: before }],
      ['/rest/revert', { Commit: removal }],
    ] as const) {
      const answer = await post(path, headers);
      expect(answer.status, path).toBe(403);
      const message = (await answer.json()).message;
      expect(message).toContain('key url at Production;Paris');
      expect(message).toContain('rule set team');
      expect(head()).toBe(removal);
      expect((await pull(repo, 'Production;Paris')).url.val).toBe('global');
    }
  });

  it('allows restore and revert of a group change that only changes contexts the token may change', async () => {
    const { repo, post, head } = await groupsCase();
    const before = head();
    await run('context-group', 'remove', repo, 'Datacenter', 'Labs', 'Lab2');
    const removal = head();
    expect((await pull(repo, 'Development;Lab2')).lab).toBeUndefined();
    const reverted = await post('/rest/revert', { Commit: removal });
    expect(reverted.status, await reverted.clone().text()).toBe(200);
    expect((await pull(repo, 'Development;Lab2')).lab.val).toBe('lab-dev');
    await run('context-group', 'remove', repo, 'Datacenter', 'Labs', 'Lab2');
    const restored = await post('/rest/restore', { To: before });
    expect(restored.status, await restored.clone().text()).toBe(200);
    expect((await pull(repo, 'Development;Lab2')).lab.val).toBe('lab-dev');
  });
});

describe('read-only tokens', () => {
  it('read, and are refused on every write route whatever the rules say (403)', async () => {
    const repo = newRepository();
    await run('rules', 'create', repo, 'open', '--unmatched-editable', 'true');
    const head = (await push(repo, [value('k', '*;*', 'v')])).etag!.replace(/"/g, '');
    const token = await tokenFor(repo, '--read-only', '--rules', 'open');
    expect(
      (await read(fixture.server.url, '/rest/pull', { Context: 'a;b', 'Client-Token': token })).json.properties.k.val,
    ).toBe('v');
    for (const [path, headers] of [
      ['/rest/revert', { Commit: head }],
      [`/rest/revert/${repo}`, { Commit: head }],
      ['/rest/restore', { To: head }],
      [`/rest/restore/${repo}`, { To: head }],
    ] as const) {
      const answer = await read(fixture.server.url, path, {});
      expect(answer.status).not.toBe(200); // GET is not a write route
      const posted = await fetch(`${fixture.server.url}${path}`, {
        method: 'POST',
        headers: { ...headers, 'Client-Token': token },
      });
      const text = await posted.text();
      expectJsonError({ status: posted.status, headers: posted.headers, text, json: JSON.parse(text) }, 403);
      expect(JSON.parse(text).message).toContain('is read-only');
    }
    for (const path of ['/rest/push', `/rest/push/${repo}`]) {
      const answer = await pushTo(
        fixture.server.url,
        path,
        { data: [value('k', '*;*', 'w')] },
        { 'Client-Token': token },
      );
      expect(answer.status).toBe(403);
      expect(answer.json.message).toContain('is read-only');
    }
    expect(
      JSON.parse(cliOk(fixture.repos, 'token', 'list', repo)).find((t: { readOnly: boolean }) => t.readOnly),
    ).toBeTruthy();
  });
});
