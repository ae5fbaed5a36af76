/**
 * The demo repository `demo/HowItWorks` that `cfghub serve --demo` (and `npm start`) creates when
 * it does not exist: two levels, a few keys with values per context, and a templated file.
 */
import type { RepositoryRegistry } from '../../disk/registry.js';
import { push } from '../write/push.js';
import { createRepository } from './repositories.js';

export const DEMO_ACCOUNT = 'demo';
export const DEMO_NAME = 'HowItWorks';

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
        {
          kind: 'key',
          key: 'db.host',
          readme: 'Database host name',
          values: [
            { context: '*;*', value: 'localhost', hasValue: true },
            { context: 'Production;*', value: 'db.prod.example.com', hasValue: true },
          ],
        },
        {
          kind: 'key',
          key: 'db.port',
          vdt: 'Integer',
          values: [{ context: '*;*', value: '5432', hasValue: true }],
        },
        {
          kind: 'key',
          key: 'feature.flags',
          vdt: 'List',
          values: [
            { context: '*;*', value: '[]', hasValue: true },
            { context: 'Development;*', value: '["new-ui","debug-panel"]', hasValue: true },
          ],
        },
        {
          kind: 'key',
          key: 'log.level',
          values: [
            { context: '*;*', value: 'info', hasValue: true },
            { context: 'Development;*', value: 'debug', hasValue: true },
            { context: 'Production;Billing', value: 'warn', hasValue: true },
          ],
        },
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
