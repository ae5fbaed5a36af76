/** `cfghub serve` and `cfghub promote`: the server itself and a stopped replica's folder made a primary's. */
import type { Command } from 'commander';
import { ServiceError } from '../../service/errors.js';
import { DEFAULT_LEASE_SECONDS } from '../../service/ha/keyspace.js';
import { resolveServeOptions } from '../../server/serveConfig.js';
import { serve } from '../../server/serve.js';
import { promoteFolder, replicaOfOption } from '../../server/replica.js';
import { reposDir, reposOption } from '../remote/adminTarget.js';

function positiveCount(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new ServiceError('invalid_argument', `${name} must be a whole number above 0`);
  return n;
}

export function addServeCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the HTTP API')
    .option('--port <n>', 'port (else PORT, else 8080)')
    .option('--host <h>', 'address to listen on (else HOST, else 127.0.0.1)')
    .option('--demo', 'create the demo repository demo/HowItWorks if it does not exist')
    .option('--body-limit <bytes>', 'largest request body (else CFGHUB_BODY_LIMIT, else 16 MiB)')
    .option(
      '--replica-of <url>',
      'serve as a read replica of the primary at this URL (token in CFGHUB_REPLICATION_TOKEN)',
    )
    .option(
      '--accept-new-primary',
      "with --replica-of: apply the primary's next state even from another folder, a lower generation, with many removals or branches moved backwards (kept under refs/cfghub/rewound/)",
    )
    .option(
      '--loose-objects <n>',
      'repack a repository when plain git left more loose objects than this; 0: never (else CFGHUB_LOOSE_OBJECTS, else 6700)',
    )
    .option('--max-watchers <n>', 'watches (Wait) held at once; more get 503 (else CFGHUB_MAX_WATCHERS, else 20000)')
    .option(
      '--hide-private',
      'list and serve a private repository only to callers holding a token of it; to others it answers as an unknown one',
    )
    .option(
      '--metrics-token <token>',
      'GET /metrics answers only with Authorization: Bearer <token> (else CFGHUB_METRICS_TOKEN; unset: open)',
    )
    .option(
      '--log-format <format>',
      'json (one object per line, the default) or pretty (for a terminal) (else CFGHUB_LOG_FORMAT)',
    )
    .option(
      '--workers <n>',
      'processes serving requests: 1 (the default) is a single process, auto one per core (else CFGHUB_WORKERS)',
    )
    .option(
      '--cluster <name>',
      'run as a node of this HA cluster (with --etcd and --advertise; token in CFGHUB_REPLICATION_TOKEN)',
    )
    .option('--etcd <urls>', "the HA cluster's etcd members, comma-separated client URLs")
    .option('--advertise <url>', "this node's URL as the cluster's other nodes reach it")
    .option('--ha-strict', 'refuse writes (503) rather than acknowledge a push that lives on one node only')
    .option(
      '--lease-seconds <n>',
      `the leader's lease: a lost leader is replaced within about this long (default ${DEFAULT_LEASE_SECONDS})`,
    )
    .option(
      '--config <file>',
      'a YAML file with any of the settings above as fields; flags and environment win over it',
    )
    .addOption(reposOption())
    .action(async (options) => {
      if (options.acceptNewPrimary && options.replicaOf === undefined)
        throw new ServiceError('invalid_argument', '--accept-new-primary goes with --replica-of');
      await serve({
        ...resolveServeOptions(options),
        maxWatchers: positiveCount(options.maxWatchers ?? process.env.CFGHUB_MAX_WATCHERS, '--max-watchers'),
        hidePrivate: Boolean(options.hidePrivate),
        replicaOf:
          options.replicaOf === undefined
            ? undefined
            : replicaOfOption(
                options.replicaOf,
                process.env.CFGHUB_REPLICATION_TOKEN,
                Boolean(options.acceptNewPrimary),
              ),
      });
    });

  program
    .command('promote')
    .description(
      "make a stopped read replica's folder a primary's: its generation one above every one it has seen (then: cfghub serve without --replica-of)",
    )
    .addOption(reposOption())
    .action(async (options: { repos?: string }) => promoteFolder(reposDir(options.repos)));
}
