/**
 * The listing with a filter: `GET /rest/info/all` (what the public API shows), or with an admin
 * token the admin API's listing, which holds every repository, private ones too.
 */
import { useState } from 'preact/hooks';
import { listRepositories, sameRepo, type RepositoryRecord, type Session } from '../api';
import { adminListing, type AdminSession } from '../admin';
import { Empty, FilterBox, Loaded, Table, formatDate, matchesFilter, useLoad } from '../components';

/** A row of the listing: a repository's record, or one that cannot be read (its error message instead of figures). */
type ListedRepository = RepositoryRecord & { readonly message?: string };

const everyRepository = (admin: AdminSession) =>
  adminListing(admin.token).then(({ records, unreadable }): ListedRepository[] => [
    ...records,
    ...(unreadable as unknown as ListedRepository[]),
  ]);

export function RepositoriesScreen({ session, admin }: { session?: Session; admin?: AdminSession }) {
  const [load] = useLoad(
    (): Promise<ListedRepository[]> => (admin ? everyRepository(admin) : listRepositories()),
    [admin?.token],
  );
  const [filter, setFilter] = useState('');

  return (
    <section>
      <h1>Repositories</h1>
      <p class="hint" data-testid="listing-source">
        {admin
          ? 'Every repository, private ones too (listed with your admin token).'
          : 'The public listing: a server that hides private repositories shows them only to their own tokens. An admin token lists every repository.'}
      </p>
      <FilterBox
        id="repo-filter"
        label="Filter repositories"
        placeholder="account, name or description"
        value={filter}
        onChange={setFilter}
      />
      <Loaded load={load} what="the repositories">
        {(records) => {
          if (records.length === 0) {
            return (
              <Empty>
                No repositories yet. Create one with <code>npx cfghub repo create ACCOUNT/NAME --context L1,L2</code>.
              </Empty>
            );
          }
          const shown = records.filter((r) => matchesFilter(filter, `${r.account}/${r.name} ${r.description ?? ''}`));
          if (shown.length === 0) return <Empty>No repository matches “{filter}”.</Empty>;
          return (
            <Table
              class="repos"
              caption="Repositories"
              columns={[
                'Repository',
                'Context levels',
                { label: 'Keys', num: true },
                { label: 'Values', num: true },
                'Private',
                'Created',
              ]}
            >
              {shown.map((r) => (
                <tr key={`${r.account}/${r.name}`}>
                  <td>
                    <a href={`#/r/${encodeURIComponent(r.account)}/${encodeURIComponent(r.name)}/keys`}>
                      {r.account}/{r.name}
                    </a>
                    {r.description && <div class="hint">{r.description}</div>}
                    {r.message && <div class="error-inline">{r.message}</div>}
                  </td>
                  <td>{(r.context ?? []).join(' › ')}</td>
                  <td class="num">{r.keyCount}</td>
                  <td class="num">{r.valueCount}</td>
                  <td>
                    {r.isPrivate ? 'yes' : 'no'}
                    {session && sameRepo(session, { account: r.account, repository: r.name }) && (
                      <span class="badge">your token</span>
                    )}
                  </td>
                  <td>{r.created ? formatDate(r.created) : ''}</td>
                </tr>
              ))}
            </Table>
          );
        }}
      </Loaded>
    </section>
  );
}
