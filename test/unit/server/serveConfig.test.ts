/**
 * `cfghub serve` settings: each from its flag, else the environment, else the
 * config file, else the default; the file checked strictly, naming a bad field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/service/errors.js';
import {
  coreWorkers,
  MAX_WORKERS,
  readServeConfig,
  resolveServeOptions,
  SERVE_CONFIG_FIELDS,
} from '../../../src/server/serveConfig.js';
import { availableParallelism } from 'node:os';
import { tempDir } from '../../support/harness.js';

const dir = tempDir();
afterAll(() => dir.remove());

function config(name: string, text: string): string {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  return path;
}

const FULL = `repos: /srv/from-file
port: 9000
host: 0.0.0.0
demo: true
bodyLimit: 1048576
looseObjects: 0
metricsToken: from-file
logFormat: pretty
logLevel: warn
`;

describe('serve settings', () => {
  it('takes every field from the config file', () => {
    const options = resolveServeOptions({ config: config('full.yaml', FULL) }, {});
    expect(options).toMatchObject({
      reposDir: '/srv/from-file',
      port: 9000,
      host: '0.0.0.0',
      demo: true,
      bodyLimit: 1048576,
      looseObjectLimit: undefined,
      metricsToken: 'from-file',
      logFormat: 'pretty',
      logLevel: 'warn',
    });
  });

  it('lets the environment win over the file, and flags win over both', () => {
    const file = config('full2.yaml', FULL);
    const env = {
      PORT: '9001',
      CFGHUB_REPOS: '/srv/from-env',
      CFGHUB_METRICS_TOKEN: 'from-env',
      LOG_LEVEL: 'debug',
      CFGHUB_LOG_FORMAT: 'json',
    };
    expect(resolveServeOptions({ config: file }, env)).toMatchObject({
      port: 9001,
      reposDir: '/srv/from-env',
      metricsToken: 'from-env',
      logLevel: 'debug',
      logFormat: 'json',
      host: '0.0.0.0',
    });
    expect(
      resolveServeOptions(
        { config: file, port: '9002', repos: '/srv/from-flag', metricsToken: 'from-flag', logFormat: 'pretty' },
        env,
      ),
    ).toMatchObject({
      port: 9002,
      reposDir: '/srv/from-flag',
      metricsToken: 'from-flag',
      logFormat: 'pretty',
    });
  });

  it('has the documented defaults without file, flags or environment', () => {
    expect(resolveServeOptions({}, {})).toMatchObject({
      reposDir: resolve('./repos'),
      port: 8080,
      host: '127.0.0.1',
      demo: false,
      bodyLimit: 16 * 1024 * 1024,
      looseObjectLimit: 6700,
      metricsToken: undefined,
      logFormat: 'json',
      logLevel: 'info',
    });
  });

  it.each([
    ['unknown.yaml', 'prot: 8080\n', 'Unrecognized key'],
    ['type.yaml', 'port: "eighty"\n', 'port'],
    ['format.yaml', 'logFormat: xml\n', 'logFormat'],
    ['broken.yaml', 'port: [1,\n', 'not valid YAML'],
  ])('refuses %s, naming what is wrong (exit 2)', (name, text, expected) => {
    const run = () => resolveServeOptions({ config: config(name, text) }, {});
    expect(run).toThrow(ServiceError);
    expect(run).toThrow(expected);
    try {
      run();
    } catch (error) {
      expect((error as ServiceError).code).toBe('invalid_argument');
    }
  });

  it('refuses a config file that cannot be read, without its path', () => {
    const run = () => resolveServeOptions({ config: join(dir.path, 'missing.yaml') }, {});
    expect(run).toThrow('--config: the file cannot be read (ENOENT)');
  });

  it('refuses an unknown log format', () => {
    expect(() => resolveServeOptions({ logFormat: 'xml' }, {})).toThrow('--log-format must be json or pretty');
  });
});

const HA_FIELDS = ['cluster', 'etcd', 'advertise', 'haStrict', 'leaseSeconds'];

describe("the production page's example config file", () => {
  it('is valid and shows every field', () => {
    const readme = readFileSync(join(__dirname, '../../../docs/operations/production.md'), 'utf8');
    const example = /```yaml\n(# cfghub\.yaml[\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const parsed = readServeConfig(config('readme.yaml', example!));
    // An HA node's fields are shown by the HA page's example (below).
    expect(Object.keys(parsed).sort()).toEqual(
      SERVE_CONFIG_FIELDS.filter((field) => !HA_FIELDS.includes(field)).sort(),
    );
  });

  it("the HA page's example shows every field of an HA node", () => {
    const page = readFileSync(join(__dirname, '../../../docs/operations/ha.md'), 'utf8');
    const example = /```yaml\n(# cfghub\.yaml[\s\S]*?)```/.exec(page)?.[1];
    expect(example).toBeDefined();
    const parsed = readServeConfig(config('ha.yaml', example!));
    expect(Object.keys(parsed).sort()).toEqual([...HA_FIELDS].sort());
  });

  it('takes --workers from its flag, CFGHUB_WORKERS or the file; one process by default, auto one per core; refuses 0', () => {
    expect(resolveServeOptions({}, {}).workers).toBe(1);
    expect(coreWorkers()).toBe(Math.min(MAX_WORKERS, availableParallelism()));
    expect(resolveServeOptions({ workers: 'auto' }, {}).workers).toBe(coreWorkers());
    expect(resolveServeOptions({}, { CFGHUB_WORKERS: 'auto' }).workers).toBe(coreWorkers());
    expect(resolveServeOptions({ config: config('auto.yaml', 'workers: auto\n') }, {}).workers).toBe(coreWorkers());
    const file = config('workers.yaml', 'workers: 3\n');
    expect(resolveServeOptions({ config: file }, {}).workers).toBe(3);
    expect(resolveServeOptions({ config: file }, { CFGHUB_WORKERS: '4' }).workers).toBe(4);
    expect(resolveServeOptions({ config: file, workers: '1' }, { CFGHUB_WORKERS: '4' }).workers).toBe(1);
    expect(() => resolveServeOptions({ workers: '0' }, {})).toThrow(
      `--workers must be a whole number from 1 to ${MAX_WORKERS}, got "0"`,
    );
    expect(() => resolveServeOptions({}, { CFGHUB_WORKERS: 'many' })).toThrow('CFGHUB_WORKERS must be a whole number');
  });
});
