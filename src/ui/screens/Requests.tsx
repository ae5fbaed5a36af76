/**
 * Change requests (docs/changes.md): the list, and one request with what applying it would do on
 * the current head, context by context (the server's preview, the console's one preview component), its approvals, and approve, apply
 * and close. A refusal (the author approving their own request, a conflict with what changed on the
 * branch since, missing approvals) is shown as the server words it.
 */
import { useState } from 'preact/hooks';
import {
  actOnChangeRequest,
  listChangeRequests,
  showChangeRequest,
  type ChangeRequestInfo,
  type RepoRef,
} from '../api';
import { Empty, ErrorNote, Loaded, Table, shortId, useLoad, useRequest } from '../components';
import { DryRunPreview } from '../DryRunPreview';

export function RequestsScreen({ repo, onChanged }: { repo: RepoRef; onChanged: () => void }) {
  const [selected, setSelected] = useState<number>();
  const [round, setRound] = useState(0);
  const [list] = useLoad(() => listChangeRequests(repo), [repo.account, repo.repository, round]);
  return (
    <div>
      <h2>Change requests</h2>
      <Loaded load={list} what="the change requests">
        {(changes) =>
          changes.length === 0 ? (
            <Empty>No change requests. Collect changes under Keys, then open one from Changes.</Empty>
          ) : (
            <Table columns={['#', 'Title', 'Author', 'Status', 'Approvals']} caption="Change requests">
              {changes.map((change) => (
                <tr key={change.id} data-change={change.id}>
                  <td>{change.id}</td>
                  <th scope="row">
                    <button type="button" class="link" onClick={() => setSelected(change.id)}>
                      {change.title}
                    </button>
                  </th>
                  <td>{change.author}</td>
                  <td>{change.status}</td>
                  <td>{change.approvals.map((a) => a.by).join(', ') || 'none'}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
      {selected !== undefined && (
        <RequestDetail
          key={`${selected}-${round}`}
          repo={repo}
          id={selected}
          onActed={() => {
            setRound((n) => n + 1);
            onChanged();
          }}
        />
      )}
    </div>
  );
}

function RequestDetail({ repo, id, onActed }: { repo: RepoRef; id: number; onActed: () => void }) {
  const [load] = useLoad(() => showChangeRequest(repo, id), [repo.account, repo.repository, id]);
  const { busy, error, run } = useRequest();
  const act = (action: 'approve' | 'apply' | 'close') =>
    run(async () => {
      await actOnChangeRequest(repo, id, action);
      onActed();
    });
  return (
    <section aria-labelledby="request-title" data-testid="change-request">
      <Loaded load={load} what={`change request ${id}`}>
        {(change: ChangeRequestInfo) => (
          <>
            <h3 id="request-title">
              Change request {change.id}: {change.title}
            </h3>
            <p data-testid="request-status">
              {change.status}, by {change.author}; approvals: {change.approvals.map((a) => a.by).join(', ') || 'none'}
              {change.applied && (
                <>
                  ; applied as <code>{shortId(change.applied.commit)}</code>
                </>
              )}
            </p>
            {change.comment && <p>{change.comment}</p>}
            {change.requiredApprovals && change.requiredApprovals.rules.length > 0 && (
              <p class="note" data-testid="required">
                Required: {change.requiredApprovals.rules.join(', ')} —{' '}
                {change.requiredApprovals.approved ? 'approved' : `needs ${change.requiredApprovals.needed}`}
              </p>
            )}
            {change.preview && (
              <DryRunPreview
                answer={change.preview}
                refusedLabel="Cannot be applied now; applying it would write nothing."
              />
            )}
            {error !== undefined && <ErrorNote error={error} prefix="The server refused" />}
            {change.status === 'open' && (
              <div class="buttons">
                <button type="button" disabled={busy} onClick={() => act('approve')}>
                  Approve
                </button>
                <button type="button" class="primary" disabled={busy} onClick={() => act('apply')}>
                  Apply
                </button>
                <button type="button" disabled={busy} onClick={() => act('close')}>
                  Close
                </button>
              </div>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
