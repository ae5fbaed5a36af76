/**
 * No client of cfghub's follows a redirect: the CLI, this client, the admin client and the replica
 * all send a token (and often a body: a push, a group's password) with every request, and a
 * redirect would carry them to wherever it points, another host included. Every request is made
 * with `redirect: 'manual'` and a redirect answer is refused with an error naming where it
 * pointed (its origin only: a Location may itself carry secrets), so the user can set the
 * address the server is really reached at.
 */
import { RedirectRefusedError } from './errors.js';

/** The fetch option every request of a cfghub client carries. */
export const NO_REDIRECTS = { redirect: 'manual' } as const satisfies RequestInit;

/** Why an answer is refused as a redirect, or undefined when it is not one (a 304 is not: it has no Location). */
function redirectRefusal(response: Response, server: string): string | undefined {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) return undefined;
  let where: string;
  try {
    where = new URL(location, server).origin;
  } catch {
    where = 'an address that is not a URL';
  }
  return `${server} answered ${response.status} redirecting to ${where}: cfghub does not follow redirects (the token and the request would go there too); use the address the server answers at itself`;
}

/** Refuses an answer of `server` that is a redirect: its body dropped, a RedirectRefusedError saying where it pointed. */
export async function refuseRedirect(response: Response, server: string): Promise<void> {
  const redirect = redirectRefusal(response, server);
  if (redirect === undefined) return;
  await response.body?.cancel().catch(() => undefined);
  throw new RedirectRefusedError(response.status, redirect);
}
