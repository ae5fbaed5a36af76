/**
 * What a node of an HA cluster keeps about the cluster in its own repositories folder
 * (`.cfghub/ha/state.json`), written atomically and fsynced before it is relied on:
 * - its node id, made once, so the node is the same member after a restart;
 * - the highest epoch it has seen (a leadership's create revision in etcd): a record or an
 *   announcement of a lower epoch is refused, which is what fences a leader that lost its
 *   leadership without knowing it (paused, cut off, its clock wrong);
 * - the id of the etcd cluster it belongs to: an etcd rebuilt with new data (a new id, revisions
 *   counted from 1 again) is refused until an operator bootstraps the cluster from a named node.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './durableFs.js';
import { makeFolders } from './folders.js';

export interface HaNodeState {
  readonly nodeId: string;
  readonly epoch: number;
  readonly etcdClusterId?: string;
}

export const HA_STATE_FILE = join('.cfghub', 'ha', 'state.json');

const NODE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

function parse(text: string): HaNodeState | undefined {
  try {
    const value = JSON.parse(text) as Partial<HaNodeState>;
    if (
      typeof value.nodeId !== 'string' ||
      !NODE_ID.test(value.nodeId) ||
      !Number.isSafeInteger(value.epoch) ||
      (value.epoch ?? -1) < 0
    )
      return undefined;
    if (value.etcdClusterId !== undefined && typeof value.etcdClusterId !== 'string') return undefined;
    return {
      nodeId: value.nodeId,
      epoch: value.epoch!,
      ...(value.etcdClusterId ? { etcdClusterId: value.etcdClusterId } : {}),
    };
  } catch {
    return undefined;
  }
}

export class HaStateFile {
  private state: HaNodeState;
  private writes: Promise<void> = Promise.resolve();
  private readonly path: string;

  private constructor(root: string, state: HaNodeState) {
    this.path = join(root, HA_STATE_FILE);
    this.state = state;
  }

  /**
   * Reads the node's state, making it (with a new node id, or `nodeId` when given) on first use.
   * A file that does not parse is an error: guessing an epoch could unfence a stale leader.
   */
  static async open(root: string, nodeId?: string): Promise<HaStateFile> {
    const path = join(root, HA_STATE_FILE);
    let text: string | undefined;
    try {
      text = fs.readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      const state = parse(text);
      if (!state)
        throw new Error(
          `the cluster state of this node (${HA_STATE_FILE}) does not parse: restore it, or remove it to join as a new node`,
        );
      if (nodeId !== undefined && nodeId !== state.nodeId)
        throw new Error(`this folder belongs to cluster node ${state.nodeId}, not ${nodeId}`);
      return new HaStateFile(root, state);
    }
    if (nodeId !== undefined && !NODE_ID.test(nodeId))
      throw new Error(`a node id is lower-case letters, digits and '-', at most 63: got ${JSON.stringify(nodeId)}`);
    makeFolders(join(root, '.cfghub', 'ha'));
    const file = new HaStateFile(root, { nodeId: nodeId ?? `node-${randomBytes(4).toString('hex')}`, epoch: 0 });
    await file.write(file.state);
    return file;
  }

  get current(): HaNodeState {
    return this.state;
  }

  private write(state: HaNodeState): Promise<void> {
    const written = this.writes.then(() => writeFileAtomic(this.path, `${JSON.stringify(state)}\n`, 0o644));
    this.writes = written.catch(() => undefined);
    return written;
  }

  /**
   * Takes `epoch` as the highest seen when it is not lower than the one kept: 'raised' (written
   * durably before this resolves), 'same', or 'stale' (lower: the caller refuses what carries it).
   */
  async observeEpoch(epoch: number): Promise<'raised' | 'same' | 'stale'> {
    if (epoch < this.state.epoch) return 'stale';
    if (epoch === this.state.epoch) {
      await this.writes; // the epoch is durable before anything relies on it
      return 'same';
    }
    const next = { ...this.state, epoch };
    this.state = next;
    await this.write(next);
    return 'raised';
  }

  /** Pins the etcd cluster this node belongs to (at bootstrap, or when an operator re-bootstraps). */
  async pinEtcdCluster(id: string): Promise<void> {
    if (this.state.etcdClusterId === id) return;
    const next = { ...this.state, etcdClusterId: id };
    this.state = next;
    await this.write(next);
  }
}
