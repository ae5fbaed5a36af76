/**
 * The push route on plain node:http, as the read routes are: a push served through
 * express cost about 0.3 ms more of the one core than the same push served here (express's router,
 * its request and response wrappers, body-parser). The answers are those of the express route,
 * byte for byte: the same handler (pushRoutes.ts), the same body rules (jsonBody.ts), the same
 * error answers (errorAnswer.ts), the same log line and metrics labels (requestLog.ts). A request
 * with a compressed body (a Content-Encoding other than identity) is left to express, whose body
 * parser inflates it.
 */
import type { HttpDeps } from '../deps.js';
import type { PlainHandler } from '../routeTable.js';
import { answerError } from '../answer/errorAnswer.js';
import { isCompressed, readPlainBody } from '../body/jsonBody.js';
import { pushHandler, type PushLocals } from './pushRoutes.js';
import { beginRequest } from '../requestLog.js';

/** The push route's handler on node:http: takes a push, and leaves one with a compressed body to express (returning false). */
export function pushFront(deps: HttpDeps): PlainHandler {
  const handle = pushHandler(deps);
  return (req, res, { pathname, params, route: matched }) => {
    if (isCompressed(req)) return false;
    const locals: PushLocals = {};
    // requestLog.ts reads the outcome and refusal where express keeps them.
    Object.assign(res, { locals });
    let named;
    let decodeError: unknown;
    try {
      named =
        params.account === undefined
          ? { pathname }
          : {
              pathname,
              account: decodeURIComponent(params.account),
              repository: decodeURIComponent(params.repository),
            };
    } catch (error) {
      decodeError = error; // a malformed escape: 400, and counted as no route (as express's router had it)
    }
    const route = decodeError ? undefined : matched.path;
    const requestId = beginRequest(deps, req, res, () => (locals.refusal ? { refusal: locals.refusal } : {}), route);
    if (!named) {
      answerError(deps, req, res, requestId, decodeError);
      return;
    }
    handle(req, res, locals, requestId, named, () => readPlainBody(req, res, deps.bodyLimit)).catch((error: unknown) =>
      answerError(deps, req, res, requestId, error),
    );
  };
}
