/**
 * `cfghub ha status|promote|bootstrap`: an HA cluster seen and repaired from outside, through its
 * etcd (`--cluster NAME --etcd URL[,URL…]`, or CFGHUB_CLUSTER and CFGHUB_ETCD) and its nodes
 * (with the cluster's replication token in CFGHUB_REPLICATION_TOKEN). See docs/operations/ha.md.
 */
import type { Command } from 'commander';
import { ServiceError } from '../../service/errors.js';
import { bootstrapEtcd, haStatus, promoteAcceptingDataLoss, type OperatorTarget } from '../../service/ha/operator.js';
import { printJson } from '../remote/adminTarget.js';

interface TargetFlags {
  readonly cluster?: string;
  readonly etcd?: string;
}

function targetOf(flags: TargetFlags): OperatorTarget {
  const cluster = flags.cluster ?? process.env.CFGHUB_CLUSTER;
  const etcd = flags.etcd ?? process.env.CFGHUB_ETCD;
  if (!cluster || !etcd)
    throw new ServiceError(
      'invalid_argument',
      'name the cluster and its etcd: --cluster NAME --etcd URL[,URL…] (or CFGHUB_CLUSTER and CFGHUB_ETCD)',
    );
  return {
    cluster,
    etcd: etcd
      .split(',')
      .map((url) => url.trim())
      .filter(Boolean),
    token: process.env.CFGHUB_REPLICATION_TOKEN?.trim() || undefined,
  };
}

const withCluster = (command: Command) =>
  command
    .option('--cluster <name>', 'the HA cluster (else CFGHUB_CLUSTER)')
    .option('--etcd <urls>', "its etcd's client URLs, comma-separated (else CFGHUB_ETCD)");

export function addHaCommands(program: Command): void {
  const ha = program
    .command('ha')
    .description('an HA cluster: its leader, sync set and nodes; repairs after a double failure or a rebuilt etcd');
  withCluster(
    ha
      .command('status')
      .description('the leader and its epoch, the sync set, and every node present with its position'),
  ).action(async (flags: TargetFlags) => {
    printJson(await haStatus(targetOf(flags)));
  });
  withCluster(
    ha
      .command('promote')
      .description(
        'after a double failure (the leader and its whole sync set lost): make NODE the leader, reporting what it lacks against the nodes that answer',
      )
      .argument('<node>')
      .option('--accept-data-loss', 'required: acknowledged pushes NODE lacks are lost'),
  ).action(async (node: string, flags: TargetFlags & { acceptDataLoss?: boolean }) => {
    if (!flags.acceptDataLoss)
      throw new ServiceError(
        'invalid_argument',
        'promote may lose acknowledged pushes: say so with --accept-data-loss',
      );
    printJson(await promoteAcceptingDataLoss(targetOf(flags), node));
  });
  withCluster(
    ha
      .command('bootstrap')
      .description('after etcd was rebuilt with new data: let the nodes accept it, with NODE the first leader')
      .argument('<node>')
      .requiredOption('--node-url <url...>', "every node's URL (each is asked for the highest epoch it saw)"),
  ).action(async (node: string, flags: TargetFlags & { nodeUrl: string[] }) => {
    printJson(await bootstrapEtcd(targetOf(flags), node, flags.nodeUrl));
  });
}
