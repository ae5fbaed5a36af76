/**
 * Sign-in with a client token or an admin token, chosen explicitly.
 * - A client token: `/rest/info` on the token form names the token's repository, which also
 *   proves the token works. Kept in sessionStorage only (api.ts).
 * - An admin token: the admin API's listing proves it. Kept in its own sessionStorage entry
 *   (admin.ts), sent only to /rest/admin. Both kinds can be held at once.
 */
import { useState } from 'preact/hooks';
import { whoseToken, type Session } from '../api';
import { adminListing, type AdminSession } from '../admin';
import { ErrorNote, useRequest } from '../components';

type Kind = 'client' | 'admin';

export function SignInScreen({
  session,
  admin,
  onSignedIn,
  onAdmin,
}: {
  session?: Session;
  admin?: AdminSession;
  onSignedIn: (session: Session) => void;
  onAdmin: (admin: AdminSession) => void;
}) {
  const [kind, setKind] = useState<Kind>('client');
  const [token, setToken] = useState('');
  const { busy, error, setError, run } = useRequest();
  const label = kind === 'client' ? 'Client token' : 'Admin token';

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const trimmed = token.trim();
    if (!trimmed) {
      setError(new Error(`Paste ${kind === 'client' ? 'a client' : 'an admin'} token first.`));
      return;
    }
    await run(async () => {
      if (kind === 'admin') {
        await adminListing(trimmed);
        onAdmin({ kind: 'admin', token: trimmed });
      } else {
        const repo = await whoseToken(trimmed);
        onSignedIn({ kind: 'client', token: trimmed, account: repo.account, repository: repo.repository });
      }
    });
  };

  const choose = (next: Kind) => {
    setKind(next);
    setError(undefined);
  };

  return (
    <section class="narrow-page">
      <h1>Sign in</h1>
      <p>
        A <strong>client token</strong> belongs to one repository: it reads a private repository and pushes, reverts or
        restores in it (<code>cfghub token create ACCOUNT/NAME --name LABEL</code> makes one). An{' '}
        <strong>admin token</strong> opens the admin API: it lists every repository and creates tags (
        <code>cfghub admin-token create --name LABEL</code> on the server's host makes one). You can hold one of each.
        Repositories that allow token-free reads are browsable without signing in.
      </p>
      {session && (
        <p class="note">
          You are signed in with a client token of {session.account}/{session.repository}; signing in with another
          client token replaces it.
        </p>
      )}
      {admin && <p class="note">You hold an admin token; signing in with another admin token replaces it.</p>}
      <form onSubmit={submit} class="stack">
        <fieldset class="choice">
          <legend>Kind of token</legend>
          <label>
            <input
              type="radio"
              name="kind"
              value="client"
              checked={kind === 'client'}
              onChange={() => choose('client')}
            />{' '}
            For one repository
          </label>
          <label>
            <input type="radio" name="kind" value="admin" checked={kind === 'admin'} onChange={() => choose('admin')} />{' '}
            For the administration of every repository
          </label>
        </fieldset>
        <label for="token">{label}</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="hint">
          Kept in this browser tab's session storage only, sent as the{' '}
          {kind === 'client' ? 'Client-Token header' : 'Authorization header to the admin API only'}, never put in a
          URL.
        </p>
        <div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </div>
        {error !== undefined && <ErrorNote error={error} prefix="Sign-in failed" />}
      </form>
    </section>
  );
}
