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
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter } from 'prom-client';
import { AdminTokenStore } from '../../disk/records/adminTokenStore.js';
import { AdminTokenService } from '../../service/admin/adminTokens.js';
import { requireRepository } from '../../service/admin/repositories.js';
import { NO_APPLICATION, ReadRecord } from '../../service/read/readRecord.js';
import type { HttpDeps } from '../deps.js';
import { answerError } from '../answer/errorAnswer.js';
import { header, sendJson } from '../answer/headers.js';
import { metricsOf } from '../metrics.js';
import { beginRequest } from '../requestLog.js';
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

const CLIENTS_PATH = /^\/rest\/clients\/([^/]+)\/([^/]+)\/?$/;

export function clientsRoutes(
  deps: HttpDeps,
  adminTokens = new AdminTokenService(new AdminTokenStore(deps.registry.root)),
): (req: IncomingMessage, res: ServerResponse) => boolean {
  bookOf(deps); // the metric is listed from the start, at zero
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const match = CLIENTS_PATH.exec(query === -1 ? url : url.slice(0, query));
    if (!match) return false;
    const requestId = beginRequest(deps, req, res, undefined, '/rest/clients/:account/:repository');
    try {
      const authorization = header(req, 'Authorization');
      adminTokens.authenticate(
        authorization?.toLowerCase().startsWith('bearer ') ? authorization.slice(7).trim() : undefined,
      );
      const repository = requireRepository(deps.registry, decodeURIComponent(match[1]), decodeURIComponent(match[2]));
      sendJson(req, res, 200, {
        repository: repository.fullName,
        clients: bookOf(deps).record.of(repository.fullName),
      });
    } catch (error) {
      answerError(deps, req, res, requestId, error);
    }
    return true;
  };
}
