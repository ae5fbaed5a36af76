/**
 * What an HA cluster keeps in etcd, under `/cfghub/<cluster>/`:
 *
 *   leader         {node, url}                  bound to the leader's lease; its create revision
 *                                               (plus the bootstrap's base) is the leader's epoch
 *   sync           {leader, epoch, members}      the sync set: the nodes every acknowledged push is
 *                                               on; written only by the leader, guarded by its key
 *   nodes/<id>     {node, url, role, epoch, …}   each node's presence, bound to its own lease
 *   bootstrap      {clusterId, epochBase, node}  written by `cfghub ha bootstrap` after an etcd was
 *                                               rebuilt: the new etcd's id, and the epoch its
 *                                               revisions count on from, so epochs never go back
 *
 * Only a node named by `sync` (its leader or a member) may become leader: every acknowledged push
 * is on each of them.
 */
import { z } from 'zod';

const nodeId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

export const leaderValueSchema = z.object({ node: nodeId, url: z.string().max(2_000) });
export type LeaderValue = z.infer<typeof leaderValueSchema>;

export const syncValueSchema = z.object({
  leader: nodeId,
  epoch: z.number().int().min(0),
  members: z.array(nodeId).max(64),
  /** Set by `ha promote --accept-data-loss`: the operator chose this leader knowing what it lacks. */
  forced: z.boolean().optional(),
});
export type SyncValue = z.infer<typeof syncValueSchema>;

export const nodeValueSchema = z.object({
  node: nodeId,
  url: z.string().max(2_000),
  role: z.enum(['leader', 'follower']),
  epoch: z.number().int().min(0),
  /** The repositories the node holds and a digest of their heads: equal digests, equal heads. */
  repositories: z.number().int().min(0),
  headsDigest: z.string().max(64),
  updated: z.string().max(40),
});
export type NodeValue = z.infer<typeof nodeValueSchema>;

export const bootstrapValueSchema = z.object({
  clusterId: z.string().max(40),
  epochBase: z.number().int().min(0),
  node: nodeId,
});
export type BootstrapValue = z.infer<typeof bootstrapValueSchema>;

export interface ClusterKeys {
  readonly leader: string;
  readonly sync: string;
  readonly nodes: string;
  readonly bootstrap: string;
  node(id: string): string;
}

/**
 * The leader's lease, in seconds, unless set: a lost leader is replaced within about this long
 * (the lease's end, etcd's expiry check of up to half a second, and an election). 3 s keeps a
 * SIGKILLed or paused leader's writes back within 5 s, with no false failover in 10 minutes on
 * the loaded 2-core machine (docs/operations/ha.md, Figures).
 */
export const DEFAULT_LEASE_SECONDS = 3;

export const CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function clusterKeys(cluster: string): ClusterKeys {
  if (!CLUSTER_NAME.test(cluster))
    throw new Error(`a cluster name is letters, digits, '.', '_' and '-', at most 63: got ${JSON.stringify(cluster)}`);
  const base = `/cfghub/${cluster}/`;
  return {
    leader: `${base}leader`,
    sync: `${base}sync`,
    nodes: `${base}nodes/`,
    bootstrap: `${base}bootstrap`,
    node: (id) => `${base}nodes/${id}`,
  };
}

/** A value read from etcd, checked against its schema; undefined when it does not parse. */
export function parseValue<T>(schema: z.ZodType<T>, text: string): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `node` may become leader under this sync set (none yet: any node, the cluster's first). */
export function mayLead(node: string, sync: SyncValue | undefined): boolean {
  return sync === undefined || sync.leader === node || sync.members.includes(node);
}
