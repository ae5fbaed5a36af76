/**
 * The cfghub web console: a single page served at /ui/ (src/http/routes/uiRoutes.ts). Navigation is in
 * the URL's fragment (`#/r/acme/app/keys`), which holds repository names only, never a token.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { loadSession, saveSession, setCurrentSession, type Session } from './api';
import { loadAdmin, saveAdmin, type AdminSession } from './admin';
import type { PendingChange } from './pending';
import { RepositoriesScreen } from './screens/Repositories';
import { RepositoryScreen, TABS, type Tab } from './screens/Repository';
import { SignInScreen } from './screens/SignIn';

type Route =
  { name: 'repositories' } | { name: 'signin' } | { name: 'repository'; account: string; repository: string; tab: Tab };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'signin') return { name: 'signin' };
  if (parts[0] === 'r' && parts.length >= 3) {
    const tab = (TABS as readonly string[]).includes(parts[3] ?? '') ? (parts[3] as Tab) : 'keys';
    return { name: 'repository', account: parts[1], repository: parts[2], tab };
  }
  return { name: 'repositories' };
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
