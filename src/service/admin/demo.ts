/**
 * The demo repository `demo/HowItWorks` that `cfghub serve --demo` (and `npm start`) creates when
 * it does not exist: two levels, a few keys with values per context, and a templated file.
 */
import type { RepositoryRegistry } from '../../disk/registry.js';
import type { KeyElement } from '../../domain/pushRequest.js';
import { push } from '../write/push.js';
import { createRepository } from './repositories.js';

export const DEMO_ACCOUNT = 'demo';
export const DEMO_NAME = 'HowItWorks';

/** The demo's keys: each key's fields and its value by context. */
const DEMO_KEYS: readonly (Omit<KeyElement, 'kind' | 'values'> & { values: Record<string, string> })[] = [
  {
    key: 'db.host',
    readme: 'Database host name',
    values: { '*;*': 'localhost', 'Production;*': 'db.prod.example.com' },
  },
  { key: 'db.port', vdt: 'Integer', values: { '*;*': '5432' } },
  { key: 'feature.flags', vdt: 'List', values: { '*;*': '[]', 'Development;*': '["new-ui","debug-panel"]' } },
  { key: 'log.level', values: { '*;*': 'info', 'Development;*': 'debug', 'Production;Billing': 'warn' } },
];

export async function ensureDemoRepository(registry: RepositoryRegistry): Promise<boolean> {
  if (registry.find(DEMO_ACCOUNT, DEMO_NAME, { fresh: true })) return false;
  const repository = await createRepository(registry, {
    account: DEMO_ACCOUNT,
    name: DEMO_NAME,
    levels: ['Environment', 'Application'],
    description: 'An example: keys with values per context, and a templated file',
    tokenFreePush: true,
    tokenFreePull: true,
  });
  await push(
    repository,
    {
      changeComment: 'Demo configuration',
      enableKeyCreation: true,
      data: [
        ...DEMO_KEYS.map(({ values, ...fields }): KeyElement => ({
          kind: 'key',
          ...fields,
          values: Object.entries(values).map(([context, value]) => ({ context, value, hasValue: true })),
        })),
        {
          kind: 'file',
          file: 'conf/database.properties',
          context: '*;*',
          content: 'host=${ db.host }\nport=${ db.port }\nlog.level=${ log.level }\n',
        },
      ],
    },
    { forceKeyPush: false, applicationName: 'cfghub demo' },
  );
  return true;
}
