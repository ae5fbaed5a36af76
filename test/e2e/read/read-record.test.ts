/**
 * Who reads what: each read's log line names the token's label (never the token), the context,
 * the commit served and the Application-Name; `GET /rest/clients/{account}/{repository}` (admin)
 * lists per application and context the commit last served, when, and how many reads, so a
 * reader still on an old commit after a push shows; `cfghub_reads_total` counts reads per
 * repository and application. The real server on a loopback port, reads from /rest/pull, /spring
 * and /ofrep.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, headOf, pushTo, reasonOf, runCommand, serverForFile } from '../../support/harness.js';
import { expectJsonError, read } from '../../support/reads.js';

const REPO = 'acme/fleet';
const fixture = serverForFile();
let token: string;
let admin: string;

async function pushOk(data: unknown[]): Promise<void> {
  const answer = await pushTo(
    fixture.server.url,
    `/rest/push/${REPO}`,
    { changeComment: 'fleet', enableKeyCreation: true, data },
    { 'Client-Token': token },
  );
  expect(answer.status, `push refused: ${reasonOf(answer)}`).toBe(200);
}

const pull = (context: string, application?: string) =>
  read(fixture.server.url, `/rest/pull/${REPO}`, {
    'Client-Token': token,
    Context: context,
    ...(application ? { 'Application-Name': application } : {}),
  });

const clients = async () => {
  const answer = await read(fixture.server.url, `/rest/clients/${REPO}`, { Authorization: `Bearer ${admin}` });
  expect(answer.status).toBe(200);
  return answer.json.clients as {
    application: string;
    context: string;
    commit: string;
    lastRead: string;
    reads: number;
  }[];
};

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Environment,Instance');
  token = cliOk(fixture.repos, 'token', 'create', REPO, '--name', 'fleet-reader').trim();
  admin = cliOk(fixture.repos, 'admin-token', 'create', '--name', 'operator').trim();
  await pushOk([{ key: 'pool.size', values: [{ context: '*;*', value: '10' }] }]);
});

describe('the read record', () => {
  it('logs the token label, context, commit and Application-Name of a read, never the token', async () => {
    expect((await pull('Production;node-1', 'billing')).status).toBe(200);
    const line = fixture.server.logs.find((l) => l.path === `/rest/pull/${REPO}` && l.application === 'billing');
    expect(line).toMatchObject({
      status: 200,
      repository: REPO,
      tokenLabel: 'fleet-reader',
      context: 'Production;node-1',
      commit: headOf(fixture.repos, REPO),
    });
    expect(fixture.server.logText()).not.toContain(token);
  });

  it('lists per application and context the commit last served, and shows a reader left on an old commit', async () => {
    const first = headOf(fixture.repos, REPO);
    await pull('Production;node-2', 'billing');
    await pull('Production;node-2', 'billing');
    await pushOk([{ key: 'pool.size', values: [{ context: 'Production;*', value: '20' }] }]);
    const second = headOf(fixture.repos, REPO);
    await pull('Production;node-1', 'billing');
    await read(`${fixture.server.url}/spring`, `/acme.fleet/Staging,node-3`, {
      Authorization: `Bearer ${token}`,
      'Application-Name': 'shop',
    });
    await fetch(`${fixture.server.url}/ofrep/v1/evaluate/flags`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
      body: JSON.stringify({ context: { targetingKey: 'node-4' } }),
    });
    const listed = await clients();
    expect(listed).toEqual([
      { application: '-', context: '*;node-4', commit: second, lastRead: expect.any(String), reads: 1 },
      { application: 'billing', context: 'Production;node-1', commit: second, lastRead: expect.any(String), reads: 2 },
      { application: 'billing', context: 'Production;node-2', commit: first, lastRead: expect.any(String), reads: 2 },
      { application: 'shop', context: 'Staging;node-3', commit: second, lastRead: expect.any(String), reads: 1 },
    ]);
    expect(Date.parse(listed[0].lastRead)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('does not record a read that was refused or whose context was malformed', async () => {
    const before = (await clients()).length;
    expect((await pull('not a context', 'bad')).status).toBe(400);
    expect(
      (await read(fixture.server.url, `/rest/pull/${REPO}`, { Context: '*;*', 'Application-Name': 'anon' })).status,
    ).toBe(403);
    expect((await clients()).length).toBe(before);
  });

  it('answers the list to an admin token only, and 404 for an unknown repository', async () => {
    expectJsonError(await read(fixture.server.url, `/rest/clients/${REPO}`), 401);
    expectJsonError(await read(fixture.server.url, `/rest/clients/${REPO}`, { Authorization: `Bearer ${token}` }), 401);
    expectJsonError(
      await read(fixture.server.url, '/rest/clients/acme/nothing', { Authorization: `Bearer ${admin}` }),
      404,
    );
  });

  it('counts reads per repository and application in /metrics', async () => {
    const text = await (await fetch(`${fixture.server.url}/metrics`)).text();
    expect(text).toContain(`cfghub_reads_total{repository="${REPO}",application="billing"} 4`);
    expect(text).toContain(`cfghub_reads_total{repository="${REPO}",application="shop"} 1`);
  });

  it('keeps the metric to 200 label pairs, counting later ones as other', async () => {
    for (let i = 0; i < 210; i++) expect((await pull('Staging;node-9', `crowd-${i}`)).status).toBe(200);
    const text = await (await fetch(`${fixture.server.url}/metrics`)).text();
    const series = text.split('\n').filter((line) => line.startsWith('cfghub_reads_total{'));
    expect(series.length).toBe(201);
    expect(text).toMatch(/cfghub_reads_total\{repository="other",application="other"\} \d+/);
  });
});

describe('cfghub clients', () => {
  it('prints the record of a running server, as its admin API answers it', async () => {
    const env = { ...process.env, CFGHUB_ADMIN_TOKEN: admin, CFGHUB_SERVER: '' };
    const printed = await runCommand(['clients', REPO, '--server', fixture.server.url], { env });
    expect(printed.code, printed.stderr).toBe(0);
    const listed = JSON.parse(printed.stdout);
    expect(listed.repository).toBe(REPO);
    expect(listed.clients).toContainEqual(
      expect.objectContaining({ application: 'shop', context: 'Staging;node-3', reads: 1 }),
    );
    expect(printed.stdout).not.toContain(token);
  });

  it("says the record is the server's when no server is named, and refuses a client token", async () => {
    const env = { ...process.env, CFGHUB_ADMIN_TOKEN: admin, CFGHUB_SERVER: '' };
    const local = await runCommand(['clients', REPO], { env });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('the read record is kept by the serving process: give --server URL');
    const refused = await runCommand(['clients', REPO, '--server', fixture.server.url], {
      env: { ...env, CFGHUB_ADMIN_TOKEN: token },
    });
    expect(refused.code).toBe(1);
  });
});
