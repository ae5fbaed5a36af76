/**
 * A repository's alias (its `alias` setting) read as the Spring application: set over the admin
 * API and by the CLI, read by the published `cloud-config-client` as it is; unique on the server
 * (409 naming the repository that has it), checked (400 saying the rule), and followed as it changes
 * however it changes (the admin API, a CLI on the folder, a plain-git commit of repository.yaml, a
 * repository deleted or renamed by moving its folder). Under --hide-private a private repository's
 * alias answers a caller without its token exactly as an alias nobody has. The real server on a
 * loopback port, real bare repositories, the real `git`.
 */
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import cloudConfigClient from 'cloud-config-client';
import {
  cli,
  cliOk,
  git,
  headOf,
  pushTo,
  reasonOf,
  runCommand,
  serverForFile,
  startTestServer,
  tempDir,
  type TestServer,
} from '../../support/harness.js';
import { expectJsonError, plainGitCommit, read } from '../../support/reads.js';
import { until } from '../../support/poll.js';

const SHOP = 'acme/shop';
const BILLING = 'acme/billing';

const fixture = serverForFile();
let admin: string;
let shopToken: string;
let billingToken: string;

async function pushPort(url: string, repository: string, token: string, port: string): Promise<void> {
  const answer = await pushTo(
    url,
    `/rest/push/${repository}`,
    {
      changeComment: 'port',
      enableKeyCreation: true,
      data: [{ key: 'server.port', vdt: 'Integer', values: [{ context: '*;*', value: port }] }],
    },
    { 'Client-Token': token },
  );
  expect(answer.status, `push refused: ${reasonOf(answer)}`).toBe(200);
}

const patchSettings = (url: string, token: string, repository: string, body: unknown) =>
  fetch(`${url}/rest/admin/repositories/${repository}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (response) => {
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
  });

/** What a Spring client reads of an application: the port, or the client's error. */
const portOf = (name: string, token: string) =>
  cloudConfigClient
    .load({
      endpoint: `${fixture.server.url}/spring`,
      name,
      profiles: ['Production'],
      auth: { user: 'app', pass: token },
    } as Parameters<typeof cloudConfigClient.load>[0])
    .then((config) => config.get('server.port') as unknown);

const statusOf = async (name: string, token: string) =>
  (await read(fixture.server.url, `/spring/${name}/Production`, { Authorization: `Bearer ${token}` })).status;

beforeAll(async () => {
  const repos = fixture.repos;
  for (const repository of [SHOP, BILLING])
    cliOk(repos, 'repo', 'create', repository, '--context', 'Environment,Instance');
  shopToken = cliOk(repos, 'token', 'create', SHOP, '--name', 'shop-reader').trim();
  billingToken = cliOk(repos, 'token', 'create', BILLING, '--name', 'billing-reader').trim();
  admin = cliOk(repos, 'admin-token', 'create', '--name', 'operator').trim();
  await pushPort(fixture.server.url, SHOP, shopToken, '8080');
  await pushPort(fixture.server.url, BILLING, billingToken, '9090');
});

describe('a repository read by its alias', () => {
  it('is read by cloud-config-client by the alias set over the admin API, as by account.repository', async () => {
    const set = await patchSettings(fixture.server.url, admin, SHOP, { alias: 'shop-service' });
    expect(set.status, set.text).toBe(200);
    expect(set.json.alias).toBe('shop-service');
    expect(git(join(fixture.repos, 'acme', 'shop.git'), 'show', 'refs/heads/main:repository.yaml')).toContain(
      'alias: shop-service',
    );
    expect(await portOf('shop-service', shopToken)).toBe(8080);
    expect(await portOf('acme.shop', shopToken)).toBe(8080);
    // Any case, as repository names; the Environment is named as asked.
    const environment = await read(fixture.server.url, '/spring/Shop-Service/Production', {
      Authorization: `Bearer ${shopToken}`,
    });
    expect(environment.status, environment.text).toBe(200);
    expect(environment.json.name).toBe('Shop-Service');
    const document = await read(fixture.server.url, '/spring/shop-service-Production.properties', {
      Authorization: `Bearer ${shopToken}`,
    });
    expect(document.text).toBe('server.port=8080\n');
    // Access is /rest/pull's: another repository's token is refused as there.
    expect(await statusOf('shop-service', billingToken)).toBe(
      (await read(fixture.server.url, '/rest/pull/acme/shop', { 'Client-Token': billingToken })).status,
    );
  });

  it('refuses an alias another repository has (any case) with a 409 naming it, and writes nothing', async () => {
    const before = headOf(fixture.repos, BILLING);
    const taken = await patchSettings(fixture.server.url, admin, BILLING, { alias: 'SHOP-service' });
    const message = expectJsonError({ ...taken, json: taken.json }, 409);
    expect(message).toContain('acme/shop');
    expect(message).toContain('SHOP-service');
    expect(headOf(fixture.repos, BILLING)).toBe(before);
    // The CLI on the folder is refused alike (exit 1, naming it).
    const refused = cli(fixture.repos, 'repo', 'settings', BILLING, '--alias', 'shop-service');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('acme/shop');
    expect(headOf(fixture.repos, BILLING)).toBe(before);
    // Setting a repository's own alias again is no change.
    const again = await patchSettings(fixture.server.url, admin, SHOP, { alias: 'shop-service' });
    expect(again.status, again.text).toBe(200);
  });

  it('refuses an alias that breaks the rule with a 400 saying it, and writes nothing', async () => {
    const before = headOf(fixture.repos, BILLING);
    for (const alias of ['acme.billing', '', 'a--b', '-billing', 'bill ing', 'b'.repeat(101), 'billing/x']) {
      const refused = await patchSettings(fixture.server.url, admin, BILLING, { alias });
      const message = expectJsonError({ ...refused, json: refused.json }, 400);
      expect(message, alias).toContain("letters and digits joined by single '-' or '_'");
    }
    expect(headOf(fixture.repos, BILLING)).toBe(before);
    const byCli = cli(fixture.repos, 'repo', 'settings', BILLING, '--alias', 'has.dot');
    expect(byCli.code).toBe(2); // invalid arguments, as every command's
    expect(byCli.stderr).toContain("letters and digits joined by single '-' or '_'");
    expect(headOf(fixture.repos, BILLING)).toBe(before);
    expect(await patchSettings(fixture.server.url, admin, BILLING, { alias: 'b'.repeat(100) })).toMatchObject({
      status: 200,
    });
  });

  it('answers an alias nobody has 404, as an unknown application', async () => {
    const unknown = await read(fixture.server.url, '/spring/no-such-app/Production', {
      Authorization: `Bearer ${shopToken}`,
    });
    expect(expectJsonError(unknown, 404)).toContain('no application no-such-app');
    await expect(portOf('no-such-app', shopToken)).rejects.toThrow(/404/);
  });

  it('follows the alias as it changes: over the admin API, by the CLI on the folder, by plain git, removed', async () => {
    // Changed over the admin API: the new alias reads, the old one is gone.
    expect((await patchSettings(fixture.server.url, admin, BILLING, { alias: 'billing' })).status).toBe(200);
    expect(await portOf('billing', billingToken)).toBe(9090);
    expect(await statusOf('b'.repeat(100), billingToken)).toBe(404);
    // By another process (the CLI on the folder): the server sees the new head's settings.
    cliOk(fixture.repos, 'repo', 'settings', BILLING, '--alias', 'invoices');
    expect(await portOf('invoices', billingToken)).toBe(9090);
    expect(await statusOf('billing', billingToken)).toBe(404);
    // By a plain-git commit of repository.yaml.
    const gitdir = join(fixture.repos, 'acme', 'billing.git');
    const settings = git(gitdir, 'show', 'refs/heads/main:repository.yaml');
    plainGitCommit(gitdir, { 'repository.yaml': `${settings.replace('alias: invoices', 'alias: ledger')}\n` }, 'alias');
    expect(await portOf('ledger', billingToken)).toBe(9090);
    expect(await statusOf('invoices', billingToken)).toBe(404);
    // The released alias can be taken by another repository at once.
    const shop = await patchSettings(fixture.server.url, admin, SHOP, { alias: 'invoices' });
    expect(shop.status, shop.text).toBe(200);
    expect(await portOf('invoices', shopToken)).toBe(8080);
    expect(await statusOf('shop-service', shopToken)).toBe(404);
    // Removed, by the CLI against the server (--no-alias; the admin API's PATCH with null underneath).
    const removed = await runCommand(['repo', 'settings', SHOP, '--no-alias', '--server', fixture.server.url], {
      env: { ...process.env, CFGHUB_ADMIN_TOKEN: admin },
    });
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout).alias).toBeUndefined();
    expect(await statusOf('invoices', shopToken)).toBe(404);
    expect(await portOf('acme.shop', shopToken)).toBe(8080);
  });

  it('keeps the alias of a repository renamed by moving its folder, and drops a deleted one', async () => {
    const repos = fixture.repos;
    expect(await portOf('ledger', billingToken)).toBe(9090);
    renameSync(join(repos, 'acme', 'billing.git'), join(repos, 'acme', 'ledger.git'));
    // The token belongs to the old name; the new name's reads need one of its own.
    const ledgerToken = cliOk(repos, 'token', 'create', 'acme/ledger', '--name', 'ledger-reader').trim();
    await until(async () => (await statusOf('ledger', ledgerToken)) === 200, 'the alias read at the new name');
    expect(await portOf('ledger', ledgerToken)).toBe(9090);
    const deleted = await fetch(`${fixture.server.url}/rest/admin/repositories/acme/ledger`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(deleted.status).toBe(200);
    const gone = await read(fixture.server.url, '/spring/ledger/Production', {
      Authorization: `Bearer ${ledgerToken}`,
    });
    expect(expectJsonError(gone, 404)).toContain('no application ledger');
    // Its alias is free again.
    expect((await patchSettings(fixture.server.url, admin, SHOP, { alias: 'ledger' })).status).toBe(200);
    expect(await portOf('ledger', shopToken)).toBe(8080);
  });
});

describe('an alias under --hide-private', () => {
  const dir = tempDir();
  let server: TestServer;
  let token: string;
  let otherToken: string;

  beforeAll(async () => {
    server = await startTestServer(dir.path, { hidePrivate: true });
    cliOk(dir.path, 'repo', 'create', 'secret/vault', '--context', 'Environment,Instance', '--private');
    cliOk(dir.path, 'repo', 'create', 'open/door', '--context', 'Environment,Instance');
    token = cliOk(dir.path, 'token', 'create', 'secret/vault').trim();
    otherToken = cliOk(dir.path, 'token', 'create', 'open/door').trim();
    await pushPort(server.url, 'secret/vault', token, '7070');
    cliOk(dir.path, 'repo', 'settings', 'secret/vault', '--alias', 'vault');
  });
  afterAll(async () => {
    await server?.close();
    dir.remove();
  });

  it("answers a private repository's alias to a caller without its token exactly as an alias nobody has", async () => {
    const ask = (name: string, headers: Record<string, string>) => read(server.url, `/spring/${name}/default`, headers);
    const callers: Record<string, string>[] = [
      {},
      { Authorization: `Bearer ${otherToken}` },
      { Authorization: 'Bearer wrong' },
    ];
    for (const headers of callers) {
      const hidden = await ask('vault', headers);
      const unknown = await ask('vaulx', headers);
      expect(hidden.status).toBe(404);
      expect({ status: unknown.status, json: unknown.json }).toEqual({
        status: hidden.status,
        json: { ...hidden.json, message: hidden.json.message.replace('vault', 'vaulx') },
      });
      // And as its account.repository name is answered to the same caller.
      expect((await ask('secret.vault', headers)).status).toBe(404);
    }
    const shown = await ask('vault', { Authorization: `Bearer ${token}` });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json.propertySources[0].source).toEqual({ 'server.port': 7070 });
  });
});
