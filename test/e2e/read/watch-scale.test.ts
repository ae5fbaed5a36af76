/**
 * The shared work of the watch, against the real server: a push that wakes
 * many watchers makes each distinct answer (context, format, options) once, however many watchers
 * hold it, and writes the same bytes to each; watchers whose answer did not change are not
 * answered, and the answers of contexts the push's changes cannot reach are not even made
 * (service/answers/changeReach.ts). Counted in /metrics: the watch's answers made (one per group of
 * watchers sharing an answer, per new head that reaches it), and the read cache's misses (an
 * answer is resolved, serialised and hashed exactly when it is not found there).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { cliOk, pushTo, serverForFile } from '../../support/harness.js';
import { metricOf } from '../../support/reads.js';
import { until } from '../../support/poll.js';

const REPO = 'acme/fleet';
const PER_GROUP = 10;
const fixture = serverForFile();

const metric = (name: string) => metricOf(fixture.server.url, name);

const misses = () => metric('cfghub_read_cache_lookups_total{result="miss"}');

interface Held {
  readonly group: string;
  done: boolean;
  answer?: { status: number; etag: string | null; text: string };
}

beforeAll(async () => {
  cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env,App', '--token-free-pull', '--token-free-push');
  const pushed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
    changeComment: 'first',
    enableKeyCreation: true,
    data: [
      { key: 'own', values: ['E0', 'E1', 'E2', 'E3'].map((env) => ({ context: `${env};*`, value: `${env}-v0` })) },
    ],
  });
  expect(pushed.status).toBe(200);
});

describe('a push that wakes many watchers', () => {
  it('makes each distinct answer the push reaches once, writes the same bytes to all its watchers, and neither makes nor answers the others', async () => {
    // Five distinct answers: four contexts as JSON, and the first context as YAML too.
    const groups = [
      { name: 'E0 json', context: 'E0;app', query: '' },
      { name: 'E0 yaml', context: 'E0;app', query: '?format=yaml' },
      { name: 'E1 json', context: 'E1;app', query: '' },
      { name: 'E2 json', context: 'E2;app', query: '' },
      { name: 'E3 json', context: 'E3;app', query: '' },
    ];
    const held: Held[] = [];
    let e3Etag = '';
    for (const group of groups) {
      const url = `${fixture.server.url}/rest/pull/${REPO}${group.query}`;
      const first = await fetch(url, { headers: { Context: group.context } });
      await first.text();
      const etag = first.headers.get('etag')!;
      if (group.name === 'E3 json') e3Etag = etag;
      for (let i = 0; i < PER_GROUP; i++) {
        const watcher: Held = { group: group.name, done: false };
        held.push(watcher);
        void fetch(url, { headers: { Context: group.context, 'If-None-Match': etag, Wait: '60' } }).then(
          async (response) => {
            watcher.answer = {
              status: response.status,
              etag: response.headers.get('etag'),
              text: await response.text(),
            };
            watcher.done = true;
          },
        );
      }
    }
    await until(async () => (await metric('cfghub_watchers')) === held.length, 'every watcher held');
    const missesBefore = await misses();
    const madeBefore = await metric('cfghub_watch_answers_made_total');

    // Changes E0 and E1: three of the five answers change; E2's and E3's values are not touched.
    const pushed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
      changeComment: 'two contexts',
      data: [
        {
          key: 'own',
          values: [
            { context: 'E0;*', value: 'E0-v1' },
            { context: 'E1;*', value: 'E1-v1' },
          ],
        },
      ],
    });
    expect(pushed.status).toBe(200);
    const affected = held.filter((w) => w.group.startsWith('E0') || w.group.startsWith('E1'));
    const unaffected = held.filter((w) => !affected.includes(w));
    await until(() => affected.every((w) => w.done), 'every affected watcher answered');
    await until(
      async () => (await metric('cfghub_watchers')) === unaffected.length,
      'the unaffected watchers left held',
    );
    expect(unaffected.some((w) => w.done)).toBe(false);

    // One answer made per distinct (context, format, options) the push reaches: 3, not one per
    // watcher (30), nor one per group held (5): E2's and E3's are known unchanged from the push's changes.
    const reached = groups.filter((g) => g.context.startsWith('E0') || g.context.startsWith('E1')).length;
    expect((await misses()) - missesBefore).toBe(reached);
    expect((await metric('cfghub_watch_answers_made_total')) - madeBefore).toBe(reached);
    for (const group of ['E0 json', 'E0 yaml', 'E1 json']) {
      const answers = affected.filter((w) => w.group === group).map((w) => w.answer!);
      expect(answers).toHaveLength(PER_GROUP);
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(new Set(answers.map((a) => a.text)).size).toBe(1);
      expect(new Set(answers.map((a) => a.etag)).size).toBe(1);
    }
    // The wake's one log line (not one per watcher) says so too.
    await until(() => fixture.server.logs.some((l) => l.event === 'watch-wake'), 'the watch-wake log line');
    expect(fixture.server.logs.filter((l) => l.event === 'watch-wake')).toEqual([
      expect.objectContaining({
        repository: REPO,
        answersMade: reached,
        woken: affected.length,
        durationMs: expect.any(Number),
      }),
    ]);
    expect(affected.find((w) => w.group === 'E0 yaml')!.answer!.text).toContain('E0-v1');
    expect(JSON.parse(affected.find((w) => w.group === 'E1 json')!.answer!.text).properties.own.val).toBe('E1-v1');

    // A later change of E2 wakes E2's watchers only, making E2's answer alone; E3's stay held until the server closes.
    const madeBeforeE2 = await metric('cfghub_watch_answers_made_total');
    const again = await pushTo(fixture.server.url, `/rest/push/${REPO}`, {
      changeComment: 'E2',
      data: [{ key: 'own', values: [{ context: 'E2;*', value: 'E2-v1' }] }],
    });
    expect(again.status).toBe(200);
    await until(() => unaffected.filter((w) => w.group === 'E2 json').every((w) => w.done), 'the E2 watchers answered');
    expect(unaffected.filter((w) => w.group === 'E3 json').some((w) => w.done)).toBe(false);
    expect(await metric('cfghub_watchers')).toBe(PER_GROUP);
    expect((await metric('cfghub_watch_answers_made_total')) - madeBeforeE2).toBe(1);
    // E3's watchers, never answered, still hold a current answer: a read now gives the ETag they hold.
    const e3 = await fetch(`${fixture.server.url}/rest/pull/${REPO}`, { headers: { Context: 'E3;app' } });
    await e3.text();
    expect(e3.headers.get('etag')).toBe(e3Etag);
  });
});
