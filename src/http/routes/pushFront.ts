/**
 * The push route on plain node:http, as the read routes are: a push served through
 * express cost about 0.3 ms more of the one core than the same push served here (express's router,
 * its request and response wrappers, body-parser). The answers are those of the express route,
 * byte for byte: the same handler (pushRoutes.ts), the same body rules (jsonBody.ts), the same
 * error answers (errorAnswer.ts), the same log line and metrics labels (requestLog.ts). A request
 * with a compressed body (a Content-Encoding other than identity) is left to express, whose body
 * parser inflates it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HttpDeps } from '../deps.js';
import { answerError } from '../answer/errorAnswer.js';
import { isCompressed, readPlainBody } from '../body/jsonBody.js';
import { pushHandler, type PushLocals } from './pushRoutes.js';
import { beginRequest } from '../requestLog.js';

/** `/rest/push` or `/rest/push/<account>/<repository>`, without regard to case, with an optional final slash (as express matched them). */
const PUSH_PATH = /^\/rest\/push(?:\/([^/]+)\/([^/]+))?\/?$/i;

/** The push route: takes a push (returning true) and leaves every other request to the caller (returning false). */
export function pushFront(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const handle = pushHandler(deps);
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const url = req.url ?? '';
    const query = url.indexOf('?');
    const pathname = query === -1 ? url : url.slice(0, query);
    const match = PUSH_PATH.exec(pathname);
    if (!match) return false;
    if (isCompressed(req)) return false;
    const locals: PushLocals = {};
    // requestLog.ts reads the outcome and refusal where express keeps them.
    Object.assign(res, { locals });
    let named;
    let decodeError: unknown;
    try {
      named =
        match[1] === undefined
          ? { pathname }
          : { pathname, account: decodeURIComponent(match[1]), repository: decodeURIComponent(match[2]) };
    } catch (error) {
      decodeError = error; // a malformed escape: 400, and no route matched (as express's router has it)
    }
    const route = decodeError ? undefined : match[1] === undefined ? '/rest/push' : '/rest/push/:account/:repository';
    const requestId = beginRequest(deps, req, res, () => (locals.refusal ? { refusal: locals.refusal } : {}), route);
    if (!named) {
      answerError(deps, req, res, requestId, decodeError);
      return true;
    }
    handle(req, res, locals, requestId, named, () => readPlainBody(req, res, deps.bodyLimit)).catch((error: unknown) =>
      answerError(deps, req, res, requestId, error),
    );
    return true;
  };
}
