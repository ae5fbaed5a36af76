/**
 * Spring Cloud Config Server's read endpoints under `/spring` (read-only), so that Spring Boot's
 * `spring.config.import=configserver:http://host/spring`, Micronaut, Quarkus, Steeltoe and the
 * Node clients read cfghub unmodified:
 *
 * - `GET /spring/{application}/{profiles}[/{label}]`: the Environment document;
 * - `GET /spring/{application}-{profiles}.{yml|yaml|properties|json}` and
 *   `GET /spring/{label}/{application}-{profiles}.{…}`: the resolved properties as one document
 *   (the name splits at the last `-`, as Spring's own server splits it);
 * - `GET /spring/{application}/{profiles}/{label}/{path}`: a file rendered for the context.
 *
 * The mapping (application, profiles, label) is service/protocols/springEnvironment.ts's; an
 * application is `account.repository` or a repository's alias (service/admin/aliasIndex.ts). The read
 * is `/rest/pull`'s (protocolRead.ts): same access policy, same key ring; the token comes as HTTP
 * Basic's password, a Bearer token or `Client-Token` (protocolAuth.ts). Served from node:http, as
 * the other reads (see app.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TimeSlices } from '../../lib/timeSlices.js';
import { ServiceError } from '../../service/errors.js';
import { unknownRepository } from '../../service/admin/repositories.js';
import { aliasIndexOf } from '../../service/admin/aliasIndex.js';
import { ErrorCode } from '../../domain/errors.js';
import { rawFile } from '../../service/read/read.js';
import {
  contextOfProfiles,
  labelPoint,
  MAX_SPRING_SEGMENT,
  profileList,
  repositoryCandidates,
  springEnvironmentSteps,
  springPropertiesSteps,
} from '../../service/protocols/springEnvironment.js';
import type { HttpDeps } from '../deps.js';
import type { PlainHandler } from '../routeTable.js';
import { answerError } from '../answer/errorAnswer.js';
import { badRequest } from '../answer/errors.js';
import { booleanHeader, sendBytes } from '../answer/headers.js';
import { jsonAnswer } from '../../service/answers/answerInSlices.js';
import { answerOf } from '../../service/answers/readCache.js';
import { readAccess } from '../access/readAccess.js';
import { renderedPull } from '../../service/answers/renderedPull.js';
import { beginRequest } from '../requestLog.js';
import { presentedToken } from './protocolAuth.js';
import { protocolRead } from './protocolRead.js';
import { noteRead, readFields, type ReadNote } from './readNote.js';

export const SPRING_PREFIX = '/spring/';

/** `{application}-{profiles}.{extension}`: the application is everything up to the last `-`. */
const DOCUMENT = /^(.+)-([^-]+)\.(yml|yaml|properties|json)$/;

type Extension = 'yml' | 'yaml' | 'properties' | 'json';

type SpringRequest =
  | { kind: 'environment'; application: string; profiles: string; label?: string }
  | { kind: 'document'; application: string; profiles: string; label?: string; extension: Extension }
  | { kind: 'file'; application: string; profiles: string; label: string; path: string };

function decoded(segment: string): string {
  if (segment.length > MAX_SPRING_SEGMENT)
    throw badRequest(`a path segment is longer than ${MAX_SPRING_SEGMENT} characters`);
  return decodeURIComponent(segment); // a malformed escape: URIError, answered 400
}

function document(segment: string, label?: string): SpringRequest | undefined {
  const match = DOCUMENT.exec(decoded(segment));
  if (!match) return undefined;
  return {
    kind: 'document',
    application: match[1],
    profiles: match[2],
    extension: match[3] as Extension,
    ...(label !== undefined ? { label } : {}),
  };
}

/** What a path under /spring/ asks for; undefined when it names nothing Spring serves. */
function springRequestOf(rest: string): SpringRequest | undefined {
  const segments = rest.split('/');
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop(); // a final slash
  if (segments.some((s) => s === '')) return undefined;
  if (segments.length === 1) return document(segments[0]);
  if (segments.length === 2)
    return (
      document(segments[1], decoded(segments[0])) ?? {
        kind: 'environment',
        application: decoded(segments[0]),
        profiles: decoded(segments[1]),
      }
    );
  const [application, profiles, label] = segments.slice(0, 3).map(decoded);
  if (segments.length === 3) return { kind: 'environment', application, profiles, label };
  return { kind: 'file', application, profiles, label, path: segments.slice(3).map(decoded).join('/') };
}

const EXTENSION_FORMATS = { yml: 'yaml', yaml: 'yaml', properties: 'properties' } as const;

export function springRoutes(deps: HttpDeps): PlainHandler {
  const access = readAccess(deps);

  const aliases = aliasIndexOf(deps.registry);

  /**
   * The repository an application names: the first account.repository split that exists, else
   * the repository whose alias it is (an alias holds no dot, so the two never meet).
   */
  const repositoryOf = async (application: string): Promise<[string, string]> => {
    const candidates = repositoryCandidates(application);
    const found = candidates.find(([account, name]) => deps.registry.find(account, name) !== undefined);
    if (found) return found;
    const aliased = await aliases.find(application);
    if (aliased && 'repository' in aliased) return [aliased.repository.account, aliased.repository.name];
    if (aliased) deps.logger.warn({ event: 'alias-clash', alias: application, repositories: aliased.clash });
    throw unknownApplication(application);
  };
  const unknownApplication = (application: string) =>
    new ServiceError(
      'not_found',
      `no application ${application}: an application is a repository, written account.repository, or its alias`,
    );

  const handle = async (
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    asked: SpringRequest,
    note: ReadNote,
  ): Promise<void> => {
    const [account, repository] = await repositoryOf(asked.application);
    const point = labelPoint(asked.label);
    let read;
    try {
      read = await protocolRead(access, req, { pathname, account, repository, token: presentedToken(req) }, point);
    } catch (error) {
      // A repository hidden from this caller (serve --hide-private) answers as an application that does not exist.
      if (
        error instanceof ServiceError &&
        error.code === ErrorCode.NotFound &&
        error.message === unknownRepository(account, repository).message
      )
        throw unknownApplication(asked.application);
      throw error;
    }
    const { target, commitId } = read;
    const profiles = profileList(asked.profiles);
    const context = contextOfProfiles(profiles, target.snapshot.settings.levels);
    noteRead(note, read, context, req);
    deps.parts.reads.record(note);
    res.setHeader('Commit', commitId);
    let answer;
    if (asked.kind === 'environment') {
      const environment = await new TimeSlices().run(
        springEnvironmentSteps(
          target,
          commitId,
          { application: asked.application, profiles, label: asked.label },
          context,
        ),
      );
      answer = await jsonAnswer(environment, booleanHeader(req, 'Pretty'));
    } else if (asked.kind === 'document') {
      answer =
        asked.extension === 'json'
          ? await jsonAnswer(
              await new TimeSlices().run(springPropertiesSteps(target, context)),
              booleanHeader(req, 'Pretty'),
            )
          : renderedPull(target, context, EXTENSION_FORMATS[asked.extension]);
    } else {
      const file = rawFile(target, asked.path, context);
      answer = answerOf(file.content, file.contentType);
    }
    res.setHeader('ETag', answer.etag);
    sendBytes(res, 200, answer.contentType, answer.bytes);
  };

  return (req, res, { pathname, route }) => {
    const note: ReadNote = {};
    const requestId = beginRequest(deps, req, res, () => readFields(note), route.label);
    try {
      const asked = springRequestOf(pathname.slice(SPRING_PREFIX.length));
      if (!asked) throw new ServiceError('not_found', `no such Spring Cloud Config endpoint: ${pathname}`);
      handle(req, res, pathname, asked, note).catch((error: unknown) => answerError(deps, req, res, requestId, error));
    } catch (error) {
      answerError(deps, req, res, requestId, error);
    }
  };
}
