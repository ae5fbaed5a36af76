/**
 * A refused push is counted in `cfghub_push_refusals_total` under the kind of its refusal, which
 * the push carries as data: the reason's words (which name the client's keys and values) never
 * decide the label. Each case refuses one push against a real server and reads the scrape.
 */
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format';
import { beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_KINDS, type RefusalKind } from '../../../src/domain/applyPush.js';
import { createOpenRepository, pushTo, serverForFile } from '../../support/harness.js';

const REPO = 'acme/refusals';
const PUSH = `/rest/push/${REPO}`;

const fixture = serverForFile();

async function refusals(): Promise<Record<string, number>> {
  const response = await fetch(`${fixture.server.url}/metrics`);
  const families: Family[] = parsePrometheusTextFormat(await response.text());
  const family = families.find((f) => f.name === 'cfghub_push_refusals_total');
  return Object.fromEntries((family?.metrics ?? []).map((m) => [m.labels?.reason ?? '', Number(m.value)]));
}

beforeAll(async () => {
  createOpenRepository(fixture.repos, REPO);
  const setup = await pushTo(fixture.server.url, PUSH, {
    enableKeyCreation: true,
    data: [
      { key: 'locked', push: false, values: [{ context: '*;*', value: 'x' }] },
      { file: 'a.txt', context: '*;*', content: 'a' },
      { key: 'a.ref', vdt: 'FileRef', values: [{ context: '*;*', value: 'a.txt' }] },
      { key: 'limit', vdt: 'Integer', values: [{ context: '*;*', value: '1' }] },
    ],
    schemas: { keys: [{ key: 'limit', schema: { type: 'integer', maximum: 5 } }] },
  });
  expect(setup.status).toBe(200);
});

// Reasons chosen so that their words would mislead a reading of the text: a missing key named
// "password", a malformed name that says "password", a value type problem that never says "vdt".
const CASES: [RefusalKind, unknown][] = [
  ['security', { data: [{ key: 'k', securityGroup: 'nope', values: [{ context: '*;*', value: 'x' }] }] }],
  ['missing', { data: [{ key: 'db.password', values: [{ context: '*;*', value: 'x' }] }] }],
  ['push_disabled', { data: [{ key: 'locked', values: [{ context: '*;*', value: 'y' }] }] }],
  [
    'value_type',
    { enableKeyCreation: true, data: [{ key: 'port', vdt: 'Integer', values: [{ context: '*;*', value: [1, 2] }] }] },
  ],
  ['reference', { data: [{ file: 'a.txt', context: '*;*', opp: 'delete' }] }],
  ['context', { enableKeyCreation: true, data: [{ key: 'k', values: [{ context: 'a;b;c', value: 'x' }] }] }],
  ['schema', { data: [{ key: 'limit', values: [{ context: '*;*', value: '9' }] }] }],
  ['invalid', { enableKeyCreation: true, data: [{ key: 'the password', values: [{ context: '*;*', value: 'x' }] }] }],
];

describe('cfghub_push_refusals_total', () => {
  it('has a sample for every kind from the start', async () => {
    expect(Object.keys(await refusals()).sort()).toEqual([...REFUSAL_KINDS].sort());
  });

  it.each(CASES)('counts a refusal of kind %s under that label and no other', async (kind, body) => {
    const before = await refusals();
    const refused = await pushTo(fixture.server.url, PUSH, body);
    expect(refused.status, refused.body).toBe(304);
    const after = await refusals();
    for (const label of REFUSAL_KINDS)
      expect(after[label] - before[label], `${label} after ${refused.etag}`).toBe(label === kind ? 1 : 0);
  });
});
