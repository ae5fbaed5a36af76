/**
 * A repository's webhooks and the server's delivery log (status, attempts, last error), with a
 * button to deliver one again; through the admin API, so for a user holding an admin token. Hooks
 * are added with the CLI or the admin API: a secret is never typed into a page.
 */
import { useState } from 'preact/hooks';
import type { RepoRef } from '../api';
import { redeliver, webhookDeliveries, webhooks, type AdminSession } from '../admin';
import { CodeCell, CodeRowHeader, Empty, ErrorNote, formatDate, Loaded, shortId, Table, useLoad } from '../components';

export function WebhooksScreen({ repo, admin }: { repo: RepoRef; admin?: AdminSession }) {
  if (!admin)
    return (
      <p class="note" data-testid="webhooks-need-admin">
        Webhooks need an admin token: <a href="#/signin">sign in with one</a>.
      </p>
    );
  return <WebhooksTables repo={repo} admin={admin} />;
}

function WebhooksTables({ repo, admin }: { repo: RepoRef; admin: AdminSession }) {
  const [hooks] = useLoad(() => webhooks(admin, repo), [repo.account, repo.repository, admin.token]);
  const [log, reload] = useLoad(() => webhookDeliveries(admin, repo), [repo.account, repo.repository, admin.token]);
  const [problem, setProblem] = useState<unknown>(undefined);
  const again = (id: string) => {
    setProblem(undefined);
    redeliver(admin, repo, id).then(reload, setProblem);
  };
  return (
    <div data-testid="webhooks">
      <section aria-labelledby="hooks-title">
        <h2 id="hooks-title">Webhooks</h2>
        <p class="hint">
          Each receives a POST signed with its secret (<code>X-Cfghub-Signature-256</code>) after every commit. Add one
          with <code>cfghub webhook add</code>.
        </p>
        <Loaded load={hooks} what="the webhooks">
          {(list) =>
            list.length === 0 ? (
              <Empty>No webhooks.</Empty>
            ) : (
              <Table columns={['URL', 'Id', 'Added']} caption="Webhooks of this repository">
                {list.map((hook) => (
                  <tr key={hook.id} data-hook={hook.id}>
                    <CodeRowHeader>{hook.url}</CodeRowHeader>
                    <CodeCell>{hook.id}</CodeCell>
                    <td>{formatDate(hook.created)}</td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries</h2>
        <p class="hint">
          This server's log, newest first (kept in memory).{' '}
          <button type="button" onClick={reload}>
            Refresh
          </button>
        </p>
        {problem !== undefined && <ErrorNote error={problem} prefix="Could not redeliver" />}
        <Loaded load={log} what="the deliveries">
          {(list) =>
            list.length === 0 ? (
              <Empty>No deliveries yet.</Empty>
            ) : (
              <Table
                columns={['Commit', 'Status', { label: 'Attempts', num: true }, 'Last error', 'Created', '']}
                caption="Deliveries"
              >
                {list.map((d) => (
                  <tr key={d.id} data-delivery={d.id} data-status={d.status}>
                    <CodeRowHeader>{shortId(d.commit)}</CodeRowHeader>
                    <td>
                      {d.status}
                      {d.lastStatus !== undefined && ` (HTTP ${d.lastStatus})`}
                    </td>
                    <td class="num">{d.attempts}</td>
                    <td>{d.lastError ?? ''}</td>
                    <td>{formatDate(d.created)}</td>
                    <td>
                      <button type="button" onClick={() => again(d.id)} aria-label={`Redeliver ${shortId(d.commit)}`}>
                        Redeliver
                      </button>
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
    </div>
  );
}
