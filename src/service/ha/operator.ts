/**
 * What an operator does to an HA cluster from outside it (`cfghub ha …`), through etcd and the
 * nodes' `/rest/ha/` routes:
 * - status: the leader and its epoch, the sync set, and each node's role, epoch and position;
 * - promote --accept-data-loss NODE: for a double failure (the leader and every member of its sync
 *   set lost), makes NODE the only node that may lead, saying what it lacks against the nodes that
 *   answer;
 * - bootstrap NODE: after etcd was rebuilt with new data (a new cluster id), lets the nodes accept
 *   it, with NODE the only one that may lead and epochs counting on from the highest any node saw.
 */
import { EtcdClient } from '../../lib/etcd.js';
import { ServiceError } from '../errors.js';
import {
  bootstrapValueSchema,
  clusterKeys,
  leaderValueSchema,
  nodeValueSchema,
  parseValue,
  syncValueSchema,
  type NodeValue,
  type SyncValue,
} from './keyspace.js';
import { Peers, type HeadsAnswer } from './peers.js';

export interface OperatorTarget {
  readonly cluster: string;
  readonly etcd: readonly string[];
  /** The cluster's replication token, to ask the nodes for their heads. */
  readonly token?: string;
}

export interface HaStatusReport {
  readonly cluster: string;
  readonly etcdClusterId: string;
  readonly leader: { readonly node: string; readonly url: string; readonly epoch: number } | null;
  readonly syncSet: SyncValue | null;
  readonly nodes: readonly (NodeValue & { readonly inSyncSet: boolean })[];
}

export async function haStatus(target: OperatorTarget): Promise<HaStatusReport> {
  const keys = clusterKeys(target.cluster);
  const etcd = new EtcdClient(target.etcd, { requestTimeoutMs: 2_000 });
  const result = await etcd.txn(
    [],
    [
      { get: { key: keys.leader } },
      { get: { key: keys.sync } },
      { get: { key: keys.bootstrap } },
      { get: { key: keys.nodes, prefix: true } },
    ],
  );
  const [leaderKvs, syncKvs, bootstrapKvs, nodeKvs] = result.ranges;
  const base = (bootstrapKvs[0] && parseValue(bootstrapValueSchema, bootstrapKvs[0].value)?.epochBase) ?? 0;
  const leader = leaderKvs[0] && parseValue(leaderValueSchema, leaderKvs[0].value);
  const sync = syncKvs[0] ? (parseValue(syncValueSchema, syncKvs[0].value) ?? null) : null;
  const nodes = nodeKvs.flatMap((kv) => {
    const value = parseValue(nodeValueSchema, kv.value);
    return value
      ? [{ ...value, inSyncSet: sync !== null && (sync.leader === value.node || sync.members.includes(value.node)) }]
      : [];
  });
  return {
    cluster: target.cluster,
    etcdClusterId: result.header.clusterId,
    leader: leader ? { ...leader, epoch: base + leaderKvs[0].createRevision } : null,
    syncSet: sync,
    nodes,
  };
}

/** What one node holds that another lacks: repositories whose head differs, with both heads. */
export interface Lack {
  readonly repository: string;
  readonly chosen: string | null;
  readonly other: string;
  readonly otherNode: string;
}

async function headsOfNodes(target: OperatorTarget, nodes: readonly NodeValue[]): Promise<Map<string, HeadsAnswer>> {
  if (!target.token)
    throw new ServiceError(
      'invalid_argument',
      "the nodes are asked for their heads with the cluster's replication token: set CFGHUB_REPLICATION_TOKEN",
    );
  const peers = new Peers(target.token, 3_000);
  const found = new Map<string, HeadsAnswer>();
  await Promise.all(
    nodes.map(async (node) => {
      try {
        found.set(node.node, await peers.heads(node.url));
      } catch {
        // not reachable: not compared
      }
    }),
  );
  return found;
}

/**
 * Makes `node` the one node that may lead, when no leader holds the key and the sync set's nodes
 * are lost: it then campaigns and leads. Refused while a leader holds the key.
 */
export async function promoteAcceptingDataLoss(
  target: OperatorTarget,
  node: string,
): Promise<{ readonly promoted: string; readonly lacks: readonly Lack[] }> {
  const keys = clusterKeys(target.cluster);
  const etcd = new EtcdClient(target.etcd, { requestTimeoutMs: 2_000 });
  const status = await haStatus(target);
  if (status.leader)
    throw new ServiceError(
      'conflict',
      `node ${status.leader.node} leads (epoch ${status.leader.epoch}): nothing to promote`,
    );
  const chosen = status.nodes.find((candidate) => candidate.node === node);
  if (!chosen)
    throw new ServiceError(
      'not_found',
      `node ${node} is not present in the cluster (it must be running to be promoted)`,
    );
  const heads = await headsOfNodes(target, status.nodes);
  const mine = heads.get(node)?.heads ?? {};
  const lacks: Lack[] = [];
  for (const [other, answer] of heads) {
    if (other === node) continue;
    for (const [repository, head] of Object.entries(answer.heads)) {
      if (head && mine[repository] !== head)
        lacks.push({ repository, chosen: mine[repository] ?? null, other: head, otherNode: other });
    }
  }
  const syncKv = (await etcd.get(keys.sync)).kvs[0];
  const forced: SyncValue = { leader: node, epoch: 0, members: [], forced: true };
  const written = await etcd.txn(
    [
      { key: keys.leader, target: 'CREATE', number: 0 },
      { key: keys.sync, target: 'MOD', number: syncKv?.modRevision ?? 0 },
    ],
    [{ put: { key: keys.sync, value: JSON.stringify(forced) } }],
  );
  if (!written.succeeded)
    throw new ServiceError(
      'conflict',
      'the cluster changed meanwhile (a leader was elected, or the sync set moved): look at `cfghub ha status` again',
    );
  return { promoted: node, lacks };
}

/**
 * After etcd was rebuilt (a new cluster id): records the new id and an epoch base above every
 * epoch the reachable nodes have seen, with `node` the only node that may lead.
 */
export async function bootstrapEtcd(
  target: OperatorTarget,
  node: string,
  nodeUrls: readonly string[],
): Promise<{ readonly clusterId: string; readonly epochBase: number }> {
  const keys = clusterKeys(target.cluster);
  const etcd = new EtcdClient(target.etcd, { requestTimeoutMs: 2_000 });
  if (!target.token)
    throw new ServiceError(
      'invalid_argument',
      "bootstrap asks the nodes for their epochs with the cluster's replication token: set CFGHUB_REPLICATION_TOKEN",
    );
  const peers = new Peers(target.token, 3_000);
  let highest = 0;
  let named = false;
  for (const url of nodeUrls) {
    const answer = await peers.heads(url).catch(() => undefined);
    if (!answer)
      throw new ServiceError(
        'unavailable',
        `node at ${url} does not answer: every node must answer, so that no epoch goes back`,
      );
    highest = Math.max(highest, answer.epoch);
    named ||= answer.node === node;
  }
  if (!named) throw new ServiceError('invalid_argument', `node ${node} is not among the nodes given with --node-url`);
  const { header } = await etcd.get(keys.bootstrap);
  const value = { clusterId: header.clusterId, epochBase: highest, node };
  const forced: SyncValue = { leader: node, epoch: 0, members: [], forced: true };
  const written = await etcd.txn(
    [{ key: keys.leader, target: 'CREATE', number: 0 }],
    [
      { put: { key: keys.bootstrap, value: JSON.stringify(value) } },
      { put: { key: keys.sync, value: JSON.stringify(forced) } },
    ],
  );
  if (!written.succeeded)
    throw new ServiceError('conflict', 'a leader holds the key of this etcd already: it needs no bootstrap');
  return { clusterId: header.clusterId, epochBase: highest };
}
