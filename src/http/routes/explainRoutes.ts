/**
 * `GET /rest/explain/{account}/{repository}`: which value of `KeyName` wins for
 * `Context` and why, and with a `Client-Token` whether that token could change it. The access
 * rules of a read.
 */
import type { Request, RequestHandler, Response } from 'express';
import { parseRequestContext } from '../../domain/context.js';
import { explain } from '../../service/read/explain.js';
import type { HttpDeps } from '../deps.js';
import { badRequest } from '../answer/errors.js';
import { clientVersion, header, sendJson } from '../answer/headers.js';
import { readerKeyRing } from '../access/securityProfile.js';
import { AccessPolicy } from '../../service/access/accessPolicy.js';

export function explainRoutes(deps: HttpDeps): RequestHandler {
  const policy = new AccessPolicy(deps.registry, deps.tokens, { hidePrivate: deps.hidePrivate });
  return async (req: Request, res: Response) => {
    clientVersion(req);
    const grant = await policy.require({
      operation: 'read',
      account: String(req.params.account),
      repository: String(req.params.repository),
      token: header(req, 'Client-Token'),
      what: req.path,
    });
    const keyName = header(req, 'KeyName');
    if (!keyName) throw badRequest('the KeyName header is required');
    const contextText = header(req, 'Context');
    if (contextText === undefined) throw badRequest('the Context header is required: one item per level');
    const snapshot = await grant.repository.snapshot(grant.head);
    const parsed = parseRequestContext(contextText, snapshot.settings.levels);
    if (!parsed.ok) throw badRequest(parsed.problem);
    const ring = await readerKeyRing(req, grant.repository, grant.head, grant.groupKeys ?? []);
    const body = explain({ snapshot, keyName, context: parsed.context, ring, token: grant.token });
    sendJson(req, res, 200, {
      account: grant.repository.account,
      repository: grant.repository.name,
      head: grant.head,
      ...body,
    });
  };
}
