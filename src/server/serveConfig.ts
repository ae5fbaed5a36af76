/**
 * The settings of `cfghub serve`: each from its flag, else its environment variable,
 * else the config file (`--config cfghub.yaml`, every flag as a field), else its default. The
 * file is checked strictly: an unknown field or a wrong type is an error naming it (exit 2).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import { ServiceError } from '../service/errors.js';
import { DEFAULT_LEASE_SECONDS } from '../service/ha/keyspace.js';
import { DEFAULT_LOOSE_OBJECT_LIMIT } from '../disk/objects/looseObjects.js';
import type { ServeOptions } from './serveOptions.js';
import { withoutTrailingSlashes } from '../lib/urls.js';

export const LOG_FORMATS = ['json', 'pretty'] as const;

const configSchema = z.strictObject({
  repos: z.string().optional(),
  port: z.number().int().optional(),
  host: z.string().optional(),
  demo: z.boolean().optional(),
  bodyLimit: z.number().int().optional(),
  looseObjects: z.number().int().optional(),
  metricsToken: z.string().min(1).optional(),
  workers: z.union([z.number().int(), z.literal('auto')]).optional(),
  logFormat: z.enum(LOG_FORMATS).optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  cluster: z.string().optional(),
  etcd: z.union([z.string(), z.array(z.string())]).optional(),
  advertise: z.string().optional(),
  haStrict: z.boolean().optional(),
  leaseSeconds: z.number().int().optional(),
});

export type ServeConfig = z.infer<typeof configSchema>;

/** The fields a config file may have (the README's example shows each). */
export const SERVE_CONFIG_FIELDS = Object.keys(configSchema.shape);

/** What commander gives the serve action (strings, as typed). */
export interface ServeFlags {
  readonly config?: string;
  readonly repos?: string;
  readonly port?: string;
  readonly host?: string;
  readonly demo?: boolean;
  readonly bodyLimit?: string;
  readonly looseObjects?: string;
  readonly metricsToken?: string;
  readonly logFormat?: string;
  readonly workers?: string;
  readonly cluster?: string;
  readonly etcd?: string;
  readonly advertise?: string;
  readonly haStrict?: boolean;
  readonly leaseSeconds?: string;
}

export function readServeConfig(path: string): ServeConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ServiceError(
      'invalid_argument',
      `--config: the file cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let document: unknown;
  try {
    document = parse(text) ?? {};
  } catch (error) {
    throw new ServiceError('invalid_argument', `--config: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = configSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ServiceError('invalid_argument', `--config: ${issue.path.join('.') || 'the document'}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * A whole number within bounds from its flag, else its variable, else the config file, else the
 * default; the message names whichever was used.
 */
function numberSetting(
  flag: string | undefined,
  variable: string,
  env: NodeJS.ProcessEnv,
  fromFile: number | undefined,
  fallback: number,
  min: number,
  max: number,
  what: string,
): number {
  const [name, text] =
    flag !== undefined
      ? [`--${what}`, flag]
      : env[variable]
        ? [variable, env[variable]!]
        : fromFile !== undefined
          ? [`${what} in --config`, String(fromFile)]
          : [undefined, undefined];
  if (name === undefined) return fallback;
  const value = Number(text);
  if (!/^\d{1,15}$/.test(text!.trim()) || !Number.isInteger(value) || value < min || value > max) {
    throw new ServiceError(
      'invalid_argument',
      `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** `serve --workers` at most: each worker is a process with its own heap and caches. */
export const MAX_WORKERS = 64;

/** `--workers auto`: one worker per core Node may use (os.availableParallelism), at most MAX_WORKERS. */
export function coreWorkers(): number {
  return Math.max(1, Math.min(MAX_WORKERS, availableParallelism()));
}

/**
 * One process unless asked: measured on 2 cores (README "Workers"), a second worker served no more
 * pulls than one process, pushes fell by half (workers take turns at a repository's lock and read
 * each other's packs), and memory doubled past the bound of 500 MB for 100 repositories.
 */
export const DEFAULT_WORKERS = 1;

/** `auto` read as the number of cores; anything else as it is. */
function autoWorkers(text: string | undefined): string | undefined {
  return text?.trim() === 'auto' ? String(coreWorkers()) : text;
}

/** The first that is defined: flag, environment, config file. */
function pick<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((value) => value !== undefined && value !== '');
}

export function resolveServeOptions(
  flags: ServeFlags,
  env: NodeJS.ProcessEnv = process.env,
): ServeOptions & { logFormat: (typeof LOG_FORMATS)[number]; logLevel: string } {
  const config = flags.config === undefined ? {} : readServeConfig(flags.config);
  const port = numberSetting(flags.port, 'PORT', env, config.port, 8080, 0, 65535, 'port');
  const bodyLimit = numberSetting(
    flags.bodyLimit,
    'CFGHUB_BODY_LIMIT',
    env,
    config.bodyLimit,
    16 * 1024 * 1024,
    1,
    Number.MAX_SAFE_INTEGER,
    'body-limit',
  );
  const looseObjects = numberSetting(
    flags.looseObjects,
    'CFGHUB_LOOSE_OBJECTS',
    env,
    config.looseObjects,
    DEFAULT_LOOSE_OBJECT_LIMIT,
    0,
    Number.MAX_SAFE_INTEGER,
    'loose-objects',
  );
  // `auto` is one worker per core (see clusterPrimary.ts); 1, the default, is the single process.
  const workers = numberSetting(
    autoWorkers(flags.workers),
    'CFGHUB_WORKERS',
    { ...env, CFGHUB_WORKERS: autoWorkers(env.CFGHUB_WORKERS) },
    config.workers === 'auto' ? coreWorkers() : config.workers,
    DEFAULT_WORKERS,
    1,
    MAX_WORKERS,
    'workers',
  );
  const logFormat = pick(flags.logFormat, env.CFGHUB_LOG_FORMAT, config.logFormat) ?? 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat))
    throw new ServiceError('invalid_argument', `--log-format must be json or pretty, got ${JSON.stringify(logFormat)}`);
  return {
    cluster: clusterSettings(flags, env, config, workers),
    reposDir: resolve(pick(flags.repos, env.CFGHUB_REPOS, config.repos) ?? './repos'),
    port,
    host: pick(flags.host, env.HOST, config.host) ?? '127.0.0.1',
    demo: Boolean(flags.demo || config.demo),
    bodyLimit,
    looseObjectLimit: looseObjects === 0 ? undefined : looseObjects,
    metricsToken: pick(flags.metricsToken, env.CFGHUB_METRICS_TOKEN, config.metricsToken),
    workers,
    logFormat: logFormat as (typeof LOG_FORMATS)[number],
    logLevel: pick(env.LOG_LEVEL, config.logLevel) ?? 'info',
  };
}

/**
 * `--cluster NAME --etcd URL[,URL…] --advertise URL` (each also CFGHUB_CLUSTER, CFGHUB_ETCD,
 * CFGHUB_ADVERTISE, or the config file), with the cluster's replication token in
 * CFGHUB_REPLICATION_TOKEN; undefined when not asked for. All three or none.
 */
function clusterSettings(
  flags: ServeFlags,
  env: NodeJS.ProcessEnv,
  config: ServeConfig,
  workers: number,
): ServeOptions['cluster'] {
  const name = pick(flags.cluster, env.CFGHUB_CLUSTER, config.cluster);
  const etcdText = pick(flags.etcd, env.CFGHUB_ETCD, Array.isArray(config.etcd) ? config.etcd.join(',') : config.etcd);
  const advertise = pick(flags.advertise, env.CFGHUB_ADVERTISE, config.advertise);
  if (name === undefined && etcdText === undefined && advertise === undefined) return undefined;
  if (name === undefined || etcdText === undefined || advertise === undefined) {
    throw new ServiceError(
      'invalid_argument',
      'an HA cluster needs all three of --cluster NAME, --etcd URL[,URL…] and --advertise URL',
    );
  }
  const token = env.CFGHUB_REPLICATION_TOKEN?.trim();
  if (!token)
    throw new ServiceError(
      'invalid_argument',
      "an HA cluster needs the cluster's replication token in CFGHUB_REPLICATION_TOKEN, the same on every node (make one with: cfghub token create --replication)",
    );
  if (workers > 1)
    throw new ServiceError('invalid_argument', 'an HA cluster node runs as one process: leave out --workers');
  const leaseSeconds = numberSetting(
    flags.leaseSeconds,
    'CFGHUB_LEASE_SECONDS',
    env,
    config.leaseSeconds,
    DEFAULT_LEASE_SECONDS,
    1,
    60,
    'lease-seconds',
  );
  return {
    name,
    etcd: etcdText
      .split(',')
      .map((url) => withoutTrailingSlashes(url.trim()))
      .filter(Boolean),
    advertise: withoutTrailingSlashes(advertise),
    token,
    strict: Boolean(flags.haStrict || env.CFGHUB_HA_STRICT === 'true' || config.haStrict),
    leaseSeconds,
  };
}
