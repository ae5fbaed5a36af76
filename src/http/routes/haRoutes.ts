/**
 * The routes nodes of an HA cluster use between them, for the cluster's replication token only
 * (service/ha/): a leader's records and epoch announcements, a node's heads, and its view of the
 * cluster (also what `cfghub ha status` shows).
 *
 *   POST /rest/ha/records   one push-journal record (binary), headers Cfghub-Epoch, Cfghub-Leader:
 *                           200 {"outcome":"applied"|"already"} once durable; 409 stale_epoch or
 *                           behind; 400 bad_record
 *   POST /rest/ha/epoch     {"epoch": n, "leader": id}: 200, or 409 stale_epoch
 *   POST /rest/ha/sync      {"epoch": n, "leader": id}: 200 once the node holds the leader's state
 *                           (repositories, tags, token records); 409 stale_epoch or behind
 *   GET  /rest/ha/heads     {"node", "epoch", "headsDigest", "heads": {"account/name": commit}}
 *   GET  /rest/ha/status    the node's view: role, epoch, leader, sync set, problem
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { ServiceError } from '../../service/errors.js';
import type { RecordOutcome } from '../../service/ha/clusterNode.js';
import type { HttpDeps } from '../deps.js';
import { HttpError } from '../answer/errors.js';
import { header, sendJson } from '../answer/headers.js';
import { bodyReader, parseJson, requireJsonContentType } from '../body/jsonBody.js';
import { requireReplicationToken } from './replicationRoutes.js';

/** A record holds one push's pack: at most the push body limit's worth, plus its index and head. */
const RECORD_OVERHEAD = 4 * 1024 * 1024;
export const epochSchema = z.strictObject({ epoch: z.number().int().min(1), leader: z.string().max(64) });

function answer(req: Request, res: Response, outcome: RecordOutcome): void {
  if (outcome.ok) return sendJson(req, res, 200, { outcome: outcome.outcome });
  const status = outcome.code === 'bad_record' ? 400 : 409;
  sendJson(req, res, status, { error: { code: outcome.code, message: outcome.message } });
}

/**
 * Requires the cluster's token: another replication token is a read replica's, which may follow
 * the cluster but never speak as one of its nodes (announce an epoch, send a record).
 */
function requireClusterMember(deps: HttpDeps, req: Request): void {
  if (requireReplicationToken(deps, req) !== 'member')
    throw new ServiceError(
      'forbidden',
      "the HA routes take the cluster's replication token only; this replication token is a read replica's",
    );
}

/** The HA routes' handlers, by the last segment of their paths (routeTable.ts). */
export function haRoutes(deps: HttpDeps): Record<'records' | 'epoch' | 'sync' | 'heads' | 'status', RequestHandler> {
  const cluster = () => {
    if (!deps.cluster) throw new HttpError(404, 'not_found', 'this server is not a node of an HA cluster');
    return deps.cluster;
  };
  const readRecord = bodyReader(deps.bodyLimit * 2 + RECORD_OVERHEAD);
  const readSmall = bodyReader(4096);

  const records = async (req: Request, res: Response) => {
    requireClusterMember(deps, req);
    const node = cluster();
    const epoch = Number(header(req, 'Cfghub-Epoch'));
    if (!Number.isSafeInteger(epoch) || epoch < 1)
      throw new HttpError(400, 'bad_request', 'Cfghub-Epoch must be the leader epoch, a positive integer');
    answer(req, res, await node.receiveRecord(epoch, await readRecord(req, res)));
  };

  const epoch = async (req: Request, res: Response) => {
    requireClusterMember(deps, req);
    const node = cluster();
    requireJsonContentType(req, 'an epoch announcement');
    const parsed = epochSchema.safeParse(parseJson(await readSmall(req, res)));
    if (!parsed.success)
      throw new HttpError(400, 'bad_request', 'an epoch announcement is {"epoch": n, "leader": "node id"}');
    answer(req, res, await node.receiveEpoch(parsed.data.epoch));
  };

  const sync = async (req: Request, res: Response) => {
    requireClusterMember(deps, req);
    const node = cluster();
    requireJsonContentType(req, 'a confirmation');
    const parsed = epochSchema.safeParse(parseJson(await readSmall(req, res)));
    if (!parsed.success) throw new HttpError(400, 'bad_request', 'a confirmation is {"epoch": n, "leader": "node id"}');
    answer(req, res, await node.receiveSync(parsed.data.epoch));
  };

  const heads = (req: Request, res: Response) => {
    requireClusterMember(deps, req);
    const node = cluster();
    const { heads, digest } = node.headsDigest();
    sendJson(req, res, 200, { node: node.nodeId, epoch: node.clusterStatus().epoch, headsDigest: digest, heads });
  };

  const status = (req: Request, res: Response) => {
    requireClusterMember(deps, req);
    if (!deps.cluster) throw new ServiceError('not_found', 'this server is not a node of an HA cluster');
    sendJson(req, res, 200, deps.cluster.clusterStatus());
  };
  return { records, epoch, sync, heads, status };
}
