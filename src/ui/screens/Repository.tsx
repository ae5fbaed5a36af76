/**
 * One repository: its tabs share `/rest/info` (levels, the items in use per level, files, tags)
 * and the changes collected for the next push.
 */
import { useState } from 'preact/hooks';
import { ClientError, repoInfo, sameRepo, type RepoRef, type Session } from '../api';
import type { AdminSession } from '../admin';
import { ErrorNote, Loading, useLoad } from '../components';
import type { PendingChange } from '../pending';
import { AdminOverview } from './AdminOverview';
import { ChangesScreen } from './Changes';
import { HistoryScreen } from './History';
import { KeysScreen } from './Keys';
import { OverviewScreen } from './Overview';
import { ReadersScreen } from './Readers';
import { RequestsScreen } from './Requests';
import { ResolvedScreen } from './Resolved';
import { SchemasScreen } from './Schemas';
import { WebhooksScreen } from './Webhooks';

export const TABS = [
  'keys',
  'resolved',
  'history',
  'changes',
  'requests',
  'schemas',
  'readers',
  'webhooks',
  'overview',
] as const;
export type Tab = (typeof TABS)[number];

const TAB_LABELS: Record<Tab, string> = {
  keys: 'Keys',
  resolved: 'Resolved',
  history: 'History',
  changes: 'Changes',
  requests: 'Change requests',
  schemas: 'Schemas',
  readers: 'Readers',
  webhooks: 'Webhooks',
  overview: 'Settings, tags, groups',
};

export interface RepoProps {
  readonly repo: RepoRef;
  readonly session?: Session;
  /** An admin token, when the user holds one: it creates tags (admin API). */
  readonly admin?: AdminSession;
  readonly pending: PendingChange[];
  readonly setPending: (changes: PendingChange[]) => void;
}

export function RepositoryScreen(props: RepoProps & { tab: Tab }) {
  const { repo, tab, session, pending } = props;
  const [round, setRound] = useState(0);
  const [info] = useLoad(() => repoInfo(repo), [repo.account, repo.repository, session?.token, round]);
  const refresh = () => setRound((n) => n + 1);
  const base = `#/r/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`;
  const canWrite = session && sameRepo(session, repo);

  return (
    <section>
      <h1 class="repo-title">
        {repo.account}/{repo.repository}
      </h1>
      <nav class="tabs" aria-label="Repository">
        {TABS.map((name) => (
          <a key={name} href={`${base}/${name}`} aria-current={tab === name ? 'page' : undefined}>
            {TAB_LABELS[name]}
            {name === 'changes' && pending.length > 0 && <span class="count"> ({pending.length})</span>}
          </a>
        ))}
      </nav>
      {!canWrite && (
        <p class="note">
          Not signed in for this repository: you can read it if it allows token-free reads; pushes work only if it
          allows token-free pushes. <a href="#/signin">Sign in with a token</a> of {repo.account}/{repo.repository} to
          do more.
        </p>
      )}
      {info.state === 'loading' && <Loading what="the repository" />}
      {info.state === 'error' && (
        <>
          <ErrorNote error={info.error} prefix={`Could not read ${repo.account}/${repo.repository}`} />
          {info.error instanceof ClientError && (info.error.status === 401 || info.error.status === 403) && (
            <p>
              <a href="#/signin">Sign in</a> with a client token of this repository.
            </p>
          )}
          {props.admin && tab === 'schemas' && <SchemasScreen repo={repo} admin={props.admin} />}
          {props.admin && tab !== 'schemas' && <AdminOverview repo={repo} admin={props.admin} />}
        </>
      )}
      {info.state === 'ok' && (
        <div class="tab-body">
          {tab === 'overview' && <OverviewScreen {...props} info={info.data} onChanged={refresh} />}
          {tab === 'keys' && <KeysScreen {...props} info={info.data} round={round} />}
          {tab === 'resolved' && <ResolvedScreen {...props} info={info.data} round={round} />}
          {tab === 'history' && <HistoryScreen {...props} info={info.data} onChanged={refresh} round={round} />}
          {tab === 'changes' && <ChangesScreen {...props} info={info.data} onPushed={refresh} />}
          {tab === 'requests' && <RequestsScreen repo={repo} onChanged={refresh} />}
          {tab === 'schemas' && <SchemasScreen repo={repo} admin={props.admin} />}
          {tab === 'readers' && <ReadersScreen repo={repo} admin={props.admin} head={info.data.head} />}
          {tab === 'webhooks' && <WebhooksScreen repo={repo} admin={props.admin} />}
        </div>
      )}
    </section>
  );
}
