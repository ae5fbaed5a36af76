/**
 * Who reads what, over HTTP: every read served (`/rest/pull` and the other read endpoints, the
 * Spring and OFREP routes) is recorded (service/read/readRecord.ts) and counted in
 * `cfghub_reads_total{repository, application}`; `GET /rest/clients/{account}/{repository}`
 * (admin token, `Authorization: Bearer`) lists the record of one repository, so an operator sees
 * which readers still get an old commit after a change.
 *
 * The metric's label pairs are bounded: the first MAX_READ_SERIES pairs seen get their own
 * series, later ones are counted under `repository="other", application="other"`.
 */
import type { Request, RequestHandler, Response } from 'express';
import { Counter, type Registry } from 'prom-client';
import type { AdminTokenService } from '../../service/admin/adminTokens.js';
import { requireRepository } from '../../service/admin/repositories.js';
import { NO_APPLICATION, ReadRecord } from '../../service/read/readRecord.js';
import type { HttpDeps } from '../deps.js';
import { sendJson } from '../answer/headers.js';
import { bearer } from './adminRoutes.js';
import type { ReadNote } from './readNote.js';

/** Distinct (repository, application) label pairs of cfghub_reads_total at most; the rest count as "other". */
export const MAX_READ_SERIES = 200;
const OTHER = 'other';

/** The read record of one server and its metric (one per HTTP front, in its ServerParts). */
export class ReadBook {
  readonly entries = new ReadRecord();
  private readonly reads: Counter<'repository' | 'application'>;
  private readonly series = new Set<string>();

  /** The metric is listed from the start, at zero. */
  constructor(registry: Registry) {
    this.reads = new Counter({
      name: 'cfghub_reads_total',
      help: 'Reads served, by repository and Application-Name (bounded: pairs past the first 200 count as other)',
      labelNames: ['repository', 'application'],
      registers: [registry],
    });
  }

  /** Records a read the note describes (when it got as far as a commit and a context). */
  record(note: ReadNote): void {
    if (note.repository === undefined || note.commit === undefined || note.context === undefined) return;
    this.entries.record({
      repository: note.repository,
      application: note.application,
      context: note.context,
      commit: note.commit,
    });
    const application = note.application ?? NO_APPLICATION;
    const pair = `${note.repository}\0${application}`;
    if (!this.series.has(pair) && this.series.size < MAX_READ_SERIES) this.series.add(pair);
    const labels = this.series.has(pair)
      ? { repository: note.repository, application }
      : { repository: OTHER, application: OTHER };
    this.reads.inc(labels);
  }

  /** The contexts read from a repository, as the record holds them (for the webhooks' count of answers changed). */
  contextsRead(repository: string): string[] {
    return [...new Set(this.entries.of(repository).map((entry) => entry.context))];
  }
}

/** `GET /rest/clients/{account}/{repository}`: the read record of one repository, to an admin token. */
export function clientsRoutes(deps: HttpDeps, adminTokens: AdminTokenService): RequestHandler {
  return (req: Request, res: Response) => {
    adminTokens.authenticate(bearer(req));
    const repository = requireRepository(deps.registry, String(req.params.account), String(req.params.repository));
    sendJson(req, res, 200, {
      repository: repository.fullName,
      clients: deps.parts.reads.entries.of(repository.fullName),
    });
  };
}
