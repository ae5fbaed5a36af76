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
import express, { type Request, type Response, type Router } from 'express';
import { Counter } from 'prom-client';
import { AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { AdminTokenService } from '../../service/admin/adminTokens.js';
import { requireRepository } from '../../service/admin/repositories.js';
import { NO_APPLICATION, ReadRecord } from '../../service/read/readRecord.js';
import type { HttpDeps } from '../deps.js';
import { sendJson } from '../answer/headers.js';
import { metricsOf } from '../metrics.js';
import { bearer } from './adminRoutes.js';
import type { ReadNote } from './readNote.js';

/** Distinct (repository, application) label pairs of cfghub_reads_total at most; the rest count as "other". */
export const MAX_READ_SERIES = 200;
const OTHER = 'other';

interface ReadBook {
  readonly record: ReadRecord;
  readonly reads: Counter<'repository' | 'application'>;
  readonly series: Set<string>;
}

const books = new WeakMap<HttpDeps, ReadBook>();

function bookOf(deps: HttpDeps): ReadBook {
  let book = books.get(deps);
  if (!book) {
    const reads = new Counter({
      name: 'cfghub_reads_total',
      help: 'Reads served, by repository and Application-Name (bounded: pairs past the first 200 count as other)',
      labelNames: ['repository', 'application'],
      registers: [metricsOf(deps).registry],
    });
    books.set(deps, (book = { record: new ReadRecord(), reads, series: new Set() }));
  }
  return book;
}

/** Records a read the note describes (when it got as far as a commit and a context). */
export function recordRead(deps: HttpDeps, note: ReadNote): void {
  if (note.repository === undefined || note.commit === undefined || note.context === undefined) return;
  const book = bookOf(deps);
  book.record.record({
    repository: note.repository,
    application: note.application,
    context: note.context,
    commit: note.commit,
  });
  const application = note.application ?? NO_APPLICATION;
  const pair = `${note.repository}\0${application}`;
  if (!book.series.has(pair) && book.series.size < MAX_READ_SERIES) book.series.add(pair);
  const labels = book.series.has(pair)
    ? { repository: note.repository, application }
    : { repository: OTHER, application: OTHER };
  book.reads.inc(labels);
}

/** The contexts read from a repository, as the record holds them (for the webhooks' count of answers changed). */
export function contextsRead(deps: HttpDeps, repository: string): string[] {
  return [
    ...new Set(
      bookOf(deps)
        .record.of(repository)
        .map((entry) => entry.context),
    ),
  ];
}

/** `GET /rest/clients/{account}/{repository}`: the read record of one repository, to an admin token. */
export function clientsRoutes(
  deps: HttpDeps,
  adminTokens = new AdminTokenService(new AdminTokenStore(deps.registry.root)),
): Router {
  bookOf(deps); // the metric is listed from the start, at zero
  const router = express.Router();
  router.get('/rest/clients/:account/:repository', (req: Request, res: Response) => {
    adminTokens.authenticate(bearer(req));
    const repository = requireRepository(deps.registry, String(req.params.account), String(req.params.repository));
    sendJson(req, res, 200, { repository: repository.fullName, clients: bookOf(deps).record.of(repository.fullName) });
  });
  return router;
}
