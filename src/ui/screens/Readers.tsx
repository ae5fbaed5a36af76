/**
 * Who reads what: per application (its `Application-Name`) and context, the commit last served,
 * when, and how many reads, as the server records them in memory (an admin token reads it). A
 * reader whose last commit is not the head shows as behind: after a change, the instances that have
 * not read it yet.
 */
import type { RepoRef } from '../api';
import { readRecord, type AdminSession } from '../admin';
import { CodeCell, CodeRowHeader, Empty, formatDate, Loaded, shortId, Table, useLoad } from '../components';

export function ReadersScreen({ repo, admin, head }: { repo: RepoRef; admin?: AdminSession; head?: string }) {
  if (!admin)
    return (
      <p class="note" data-testid="readers-need-admin">
        The read record needs an admin token: <a href="#/signin">sign in with one</a>.
      </p>
    );
  return <ReadersTable repo={repo} admin={admin} head={head} />;
}

function ReadersTable({ repo, admin, head }: { repo: RepoRef; admin: AdminSession; head?: string }) {
  const [record, reload] = useLoad(() => readRecord(admin, repo), [repo.account, repo.repository, admin.token, head]);
  return (
    <section aria-labelledby="readers-title" data-testid="readers">
      <h2 id="readers-title">Who reads what</h2>
      <p class="hint">
        Kept in the server's memory since it started, at most 10,000 entries in all (the least recently read dropped
        first).{' '}
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </p>
      <Loaded load={record} what="the read record">
        {(list) =>
          list.length === 0 ? (
            <Empty>No reads recorded yet.</Empty>
          ) : (
            <Table
              columns={['Application', 'Context', 'Commit served', 'Last read', { label: 'Reads', num: true }]}
              caption="Readers of this repository"
            >
              {list.map((entry) => (
                <tr
                  key={`${entry.application}\u0000${entry.context}`}
                  data-application={entry.application}
                  data-context={entry.context}
                >
                  <CodeRowHeader>{entry.application}</CodeRowHeader>
                  <CodeCell>{entry.context}</CodeCell>
                  <td>
                    <code>{shortId(entry.commit)}</code>
                    {head !== undefined && entry.commit !== head && (
                      <span class="behind" data-testid="behind">
                        {' '}
                        behind the head
                      </span>
                    )}
                  </td>
                  <td>{formatDate(entry.lastRead)}</td>
                  <td class="num">{entry.reads}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </section>
  );
}
