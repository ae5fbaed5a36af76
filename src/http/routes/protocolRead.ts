/**
 * The read path shared by the compatibility protocols (Spring Cloud Config, OFREP): the same access
 * decision as `/rest/pull` (readAccess.ts, the access policy), the same choice of commit (a point
 * as diff and restore take it: commit id, date or tag) and the same key ring (tokens bound to
 * security groups, `Security-Profile-Auth`), giving the snapshot a read resolves against.
 */
import type { IncomingMessage } from 'node:http';
import type { AccessGrant } from '../../service/access/accessPolicy.js';
import { resolvePoint } from '../../service/read/historyPoints.js';
import type { ReadTarget } from '../../service/read/read.js';
import { readerKeyRing } from '../access/securityProfile.js';
import type { NamedRepository, ReadAccess } from '../access/readAccess.js';

export interface ProtocolRead {
  readonly grant: AccessGrant;
  readonly commitId: string;
  readonly target: ReadTarget;
}

export async function protocolRead(
  access: ReadAccess,
  req: IncomingMessage,
  named: NamedRepository,
  point: string | undefined,
): Promise<ProtocolRead> {
  const grant = await access(req, named);
  const { repository } = grant;
  const commitId = point === undefined ? grant.head : await resolvePoint(repository, grant.head, point);
  const ring = await readerKeyRing(req, repository, commitId, grant.groupKeys ?? []);
  const target: ReadTarget = {
    repository,
    account: repository.account,
    name: repository.name,
    snapshot: await repository.snapshot(commitId),
    ring,
  };
  return { grant, commitId, target };
}
