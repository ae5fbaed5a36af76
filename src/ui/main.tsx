/**
 * The cfghub web console: a single page served at /ui/ (src/http/routes/uiRoutes.ts). Navigation is in
 * the URL's fragment (`#/r/acme/app/keys`), which holds repository names only, never a token.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { loadSession, saveSession, setCurrentSession, type Session } from './api';
import { loadAdmin, saveAdmin, type AdminSession } from './admin';
import { nameProblem } from '../domain/names';
import type { PendingChange } from './pending';
import { RepositoriesScreen } from './screens/Repositories';
import { RepositoryScreen, TABS, type Tab } from './screens/Repository';
import { SignInScreen } from './screens/SignIn';

type Route =
  | { name: 'repositories' }
  | { name: 'signin' }
  | { name: 'repository'; account: string; repository: string; tab: Tab }
  | { name: 'not-a-name'; text: string; problem: string };

/** A segment of the address decoded, or undefined when it is not valid percent-encoding. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The screen the fragment names. Account and repository names from the address are held to the
 * server's own rule (src/domain/names.ts) before anything is built from them: a name such as `..`,
 * `../admin` or `a/b` would make the browser resolve a request to another route of the server.
 */
function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '').split('/');
  if (raw[0] === 'signin') return { name: 'signin' };
  if (raw[0] === 'r' && raw.length >= 3) {
    const [account, repository] = [decoded(raw[1]), decoded(raw[2])];
    if (account === undefined || repository === undefined)
      return { name: 'not-a-name', text: `${raw[1]}/${raw[2]}`, problem: 'the address is not valid percent-encoding' };
    const problem = nameProblem('the account name', account) ?? nameProblem('the repository name', repository);
    if (problem !== undefined) return { name: 'not-a-name', text: `${account}/${repository}`, problem };
    const tab = (TABS as readonly string[]).includes(raw[3] ?? '') ? (raw[3] as Tab) : 'keys';
    return { name: 'repository', account, repository, tab };
  }
  return { name: 'repositories' };
}

/** Shown for an address whose account or repository is not a name: nothing was asked of the server. */
function NotARepositoryName({ text, problem }: { text: string; problem: string }) {
  const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
  return (
    <section data-testid="not-a-repository-name">
      <h1>Not a repository name</h1>
      <p class="error" role="alert">
        “{shown}” is not a repository name: {problem}. Nothing was asked of the server.
      </p>
      <p>
        <a href="#/">See the repositories</a>
      </p>
    </section>
  );
}

export const repoHref = (account: string, repository: string, tab: Tab = 'keys') =>
  `#/r/${encodeURIComponent(account)}/${encodeURIComponent(repository)}/${tab}`;

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | undefined>(() => {
    const stored = loadSession();
    setCurrentSession(stored);
    return stored;
  });
  const [admin, setAdmin] = useState<AdminSession | undefined>(loadAdmin);
  const changeAdmin = (next: AdminSession | undefined) => {
    saveAdmin(next);
    setAdmin(next);
  };
  // Pending changes per repository, kept while the page lives.
  const [pending, setPending] = useState<Record<string, PendingChange[]>>({});
  const main = useRef<HTMLElement>(null);

  const changeSession = (next: Session | undefined) => {
    saveSession(next);
    setCurrentSession(next);
    setSession(next);
  };

  // Moving to another screen moves the focus to its content, as a page load would.
  useEffect(() => {
    main.current?.focus({ preventScroll: true });
  }, [route.name, route.name === 'repository' ? `${route.account}/${route.repository}/${route.tab}` : '']);

  return (
    <>
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          cfghub
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={route.name === 'repositories' ? 'page' : undefined}>
            Repositories
          </a>
        </nav>
        <div class="session">
          {admin && (
            <>
              <span class="signed-in" data-testid="admin-signed-in">
                Holding an admin token
              </span>
              <button type="button" onClick={() => changeAdmin(undefined)}>
                Sign out (admin)
              </button>
            </>
          )}
          {session && (
            <>
              <span class="signed-in" data-testid="signed-in">
                Signed in with a token of{' '}
                <a href={repoHref(session.account, session.repository)}>
                  {session.account}/{session.repository}
                </a>
              </span>
              <button type="button" onClick={() => changeSession(undefined)}>
                Sign out
              </button>
            </>
          )}
          {!(session && admin) && (
            <a class="button" href="#/signin" aria-current={route.name === 'signin' ? 'page' : undefined}>
              {session || admin ? 'Add a token' : 'Sign in'}
            </a>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1} ref={main}>
        {route.name === 'repositories' && <RepositoriesScreen session={session} admin={admin} />}
        {route.name === 'signin' && (
          <SignInScreen
            session={session}
            admin={admin}
            onSignedIn={(next) => {
              changeSession(next);
              location.hash = repoHref(next.account, next.repository);
            }}
            onAdmin={(next) => {
              changeAdmin(next);
              location.hash = '#/';
            }}
          />
        )}
        {route.name === 'not-a-name' && <NotARepositoryName text={route.text} problem={route.problem} />}
        {route.name === 'repository' && (
          <RepositoryScreen
            key={`${route.account}/${route.repository}`}
            repo={{ account: route.account, repository: route.repository }}
            tab={route.tab}
            session={session}
            admin={admin}
            pending={pending[`${route.account}/${route.repository}`.toLowerCase()] ?? []}
            setPending={(changes) =>
              setPending((all) => ({ ...all, [`${route.account}/${route.repository}`.toLowerCase()]: changes }))
            }
          />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app')!;
root.textContent = ''; // the page's "Loading the console…" placeholder
render(<App />, root);
