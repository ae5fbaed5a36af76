/**
 * The primary's replication endpoints, for replication tokens only:
 *
 *   GET  /rest/replication/state  the folder's identity and generation, every repository with its
 *                                 head and refs digest, every client and admin token record
 *                                 (hashes only); to a member of this HA cluster only (the
 *                                 cluster's token), the webhooks with their sealing key and
 *                                 delivered marks
 *   POST /rest/replication/feed   body {"refs": {"account/name": digest, …}, "tokensDigest": …,
 *                                 "adminTokensDigest": …, "webhooksDigest"?: … (compared for
 *                                 an HA member only), "origin": {…}, "holdMs": n}: held until
 *                                 the state differs from that, then the new state; answered as
 *                                 NDJSON lines, `{"same":true}` once a second while nothing changed
 *                                 (the replica's proof it is current), then `{"state":{…}}` and the
 *                                 end. After `holdMs` (at most 60 s) the state is sent anyway: the
 *                                 replica's periodic full check.
 *
 * A replica sends the generation it follows in `Replica-Generation` (see origin.ts). Any server
 * answers them from its own folder, so a replica can be followed by another.
 */
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { ServiceError } from '../../service/errors.js';
import { MAX_FEED_WAITERS } from '../../service/replication/feedHub.js';
import { folderIdentitySchema } from '../../disk/records/folderIdentity.js';
import {
  currentStateInSlices,
  HEARTBEAT_LINE,
  heldBy,
  MAX_REPLICATED_REPOSITORIES,
  stateFor,
  type ReplicationPeer,
  type ReplicationState,
} from '../../service/replication/state.js';
import type { HttpDeps } from '../deps.js';
import { HttpError } from '../answer/errors.js';
import { header, sendJson } from '../answer/headers.js';
import { bodyReader, parseJson, requireJsonContentType } from '../body/jsonBody.js';

/** The feed's pace and bounds. */
const FEED = {
  /** A waiting replica's proof that nothing changed comes this often: the heartbeat line. */
  heartbeatMs: 1_000,
  /** How long a request is held when it names no `holdMs`, and the longest it may name. */
  defaultHoldMs: 25_000,
  maxHoldMs: 60_000,
  /** A request names at most MAX_REPLICATED_REPOSITORIES heads of ~150 bytes each. */
  bodyLimit: 2 * 1024 * 1024,
} as const;

export const feedSchema = z.strictObject({
  refs: z.record(z.string().max(300), z.string().max(64)),
  tokensDigest: z.string().max(64),
  adminTokensDigest: z.string().max(64),
  webhooksDigest: z.string().max(64).optional(),
  origin: folderIdentitySchema.optional(),
  holdMs: z.number().int().min(0).max(FEED.maxHoldMs).optional(),
});

/** The generation a replica says it follows, if it sent one. */
function replicaGeneration(req: Request): number | undefined {
  const text = header(req, 'Replica-Generation');
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(text)) throw new HttpError(400, 'bad_request', 'Replica-Generation must be a whole number');
  return Number(text);
}

/** The presented token, from `Client-Token` or `Authorization: Bearer`. */
function presentedToken(req: Request): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(header(req, 'Authorization') ?? '');
  return header(req, 'Client-Token') ?? bearer?.[1];
}

/**
 * Requires a replication token; answers who presented it: a `member` of this HA cluster (the
 * cluster's token, which the node was started with) or a `replica` (any other replication token).
 */
export function requireReplicationToken(deps: HttpDeps, req: Request): ReplicationPeer {
  const presented = presentedToken(req);
  if (!presented)
    throw new ServiceError(
      'unauthorized',
      'the replication endpoints need a replication token (cfghub token create --replication) in Client-Token',
    );
  if (deps.tokens.authenticate(presented).kind !== 'replication') {
    throw new ServiceError(
      'forbidden',
      'the replication endpoints need a replication token; this is a token of one repository',
    );
  }
  return deps.tokens.isClusterSecret(presented) ? 'member' : 'replica';
}

export function replicationRoutes(deps: HttpDeps): { state: RequestHandler; feed: RequestHandler } {
  // The server's (ServerParts): its close ends every waiting feed with the current state.
  const origin = deps.parts.replication;
  const hub = deps.parts.feeds;
  /** What every replication request does first: the token, the folder's identity, the generation the replica reports. */
  const opening = async (req: Request): Promise<ReplicationPeer> => {
    const peer = requireReplicationToken(deps, req);
    const generation = replicaGeneration(req);
    await origin.ready();
    if (generation !== undefined) origin.replicaReports(generation);
    return peer;
  };
  const readBody = bodyReader(FEED.bodyLimit);
  /** A server holding more repositories than a replica follows refuses to name them, rather than leave its replicas behind for ever. */
  const requireReplicable = () => {
    const held = deps.registry.locations().length;
    if (held > MAX_REPLICATED_REPOSITORIES)
      throw new HttpError(
        409,
        'conflict',
        `this server holds ${held} repositories, more than the ${MAX_REPLICATED_REPOSITORIES} a replica follows: it cannot be replicated`,
      );
  };

  const state = async (req: Request, res: Response) => {
    const peer = await opening(req);
    requireReplicable();
    sendJson(req, res, 200, stateFor(await currentStateInSlices(origin), peer));
  };

  const feed = async (req: Request, res: Response) => {
    const peer = await opening(req);
    requireJsonContentType(req, 'a replication feed request');
    const parsed = feedSchema.safeParse(parseJson(await readBody(req, res)));
    if (!parsed.success)
      throw new HttpError(
        400,
        'bad_request',
        `the feed request is not {"refs": {...}, "tokensDigest": "...", "adminTokensDigest": "...", "webhooksDigest"?: "...", "origin"?: {...}, "holdMs"?: n}: ${parsed.error.issues[0]?.message ?? ''}`,
      );
    if (Object.keys(parsed.data.refs).length > MAX_REPLICATED_REPOSITORIES) {
      throw new HttpError(
        400,
        'bad_request',
        `a feed request names at most ${MAX_REPLICATED_REPOSITORIES} repositories`,
      );
    }
    requireReplicable();
    if (hub.waiting >= MAX_FEED_WAITERS)
      throw new ServiceError(
        'unavailable',
        `${MAX_FEED_WAITERS} replicas are waiting on this server already; try again`,
      );

    res.status(200).set({ 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' });
    res.flushHeaders();
    let done = false;
    let stop = () => undefined as void;
    let lastBeat = performance.now();
    const finish = (state: ReplicationState) => {
      if (done) return;
      done = true;
      clearTimeout(hold);
      stop();
      res.end(`${JSON.stringify({ state: stateFor(state, peer) })}\n`);
    };
    const hold = setTimeout(
      () => void currentStateInSlices(origin).then(finish, () => res.destroy()),
      parsed.data.holdMs ?? FEED.defaultHoldMs,
    );
    stop = hub.wait(heldBy(parsed.data, peer), finish, () => {
      if (performance.now() - lastBeat < FEED.heartbeatMs) return;
      lastBeat = performance.now();
      res.write(`${HEARTBEAT_LINE}\n`);
    });
    res.on('close', () => {
      done = true;
      clearTimeout(hold);
      stop();
    });
  };
  return { state, feed };
}
