/**
 * Sign-in with a client token: `/rest/info` on the token form names the token's repository, which
 * also proves the token works. The token is kept in sessionStorage only (api.ts).
 */
import { useState } from 'preact/hooks';
import { whoseToken, type Session } from '../api';
import { ErrorNote } from '../components';

export function SignInScreen({ session, onSignedIn }: { session?: Session; onSignedIn: (session: Session) => void }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const trimmed = token.trim();
    if (!trimmed) {
      setError(new Error('Paste a client token first.'));
      return;
    }
    setBusy(true);
    try {
      const repo = await whoseToken(trimmed);
      onSignedIn({ kind: 'client', token: trimmed, account: repo.account, repository: repo.repository });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="narrow-page">
      <h1>Sign in</h1>
      <p>
        Sign in with a <strong>client token</strong> to read a private repository and to push, revert or restore in
        it. A token belongs to one repository; <code>npx cfghub token create ACCOUNT/NAME --name LABEL</code> makes
        one. Repositories that allow token-free reads are browsable without signing in.
      </p>
      {session && (
        <p class="note">
          You are signed in with a token of {session.account}/{session.repository}; signing in again replaces it.
        </p>
      )}
      <form onSubmit={submit} class="stack">
        <label for="token">Client token</label>
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
          Kept in this browser tab's session storage only, sent as the Client-Token header, never put in a URL.
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
