/** Key records written the short way, for the tests of pure functions over them. */
import type { KeyRecord } from '../../src/domain/model.js';

/** A key `db.host` with values given as [context, value, active (default true)], and any fields changed. */
export const keyWith = (values: [string, string | null, boolean?][], fields: Partial<KeyRecord> = {}): KeyRecord => ({
  key: 'db.host',
  readme: '',
  deprecated: false,
  vdt: 'Text',
  push: true,
  values: values.map(([context, value, active]) => ({ context: context.split(';'), value, active: active ?? true })),
  ...fields,
});
