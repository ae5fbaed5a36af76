/**
 * The collected changes, pushed as one transaction with a change comment. A refused push (304)
 * changes nothing; its reason is shown at the top and beside the change it names (`data[N]`).
 */
import { useState } from 'preact/hooks';
import { createChangeRequest, pushChanges, type RepoInfo } from '../api';
import { Empty, ErrorNote, shortId } from '../components';
import { describe, pushBody, refusedIndex } from '../pending';
import type { RepoProps } from './Repository';

export function ChangesScreen({
  repo,
  pending,
  setPending,
  onPushed,
}: RepoProps & { info: RepoInfo; onPushed: () => void }) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [pushed, setPushed] = useState<string>();
  const [requested, setRequested] = useState<number>();

  /** The collected changes as a change request instead: the comment's first line is its title. */
  const request = async () => {
    if (!comment.trim()) return setError(new Error('A change request needs a comment: its first line is the title'));
    setBusy(true);
    setRefusal(undefined);
    setError(undefined);
    try {
      const [title, ...rest] = comment.trim().split('\n');
      const body = pushBody(pending, rest.join('\n').trim());
      const made = await createChangeRequest(repo, title, body);
      setRequested(made.id);
      setPending([]);
      setComment('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const base = `#/r/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`;
  const refused = refusal !== undefined ? refusedIndex(refusal) : undefined;

  const push = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(undefined);
    setError(undefined);
    setPushed(undefined);
    try {
      const outcome = await pushChanges(repo, pushBody(pending, comment));
      if (outcome.refusal !== undefined) {
        setRefusal(outcome.refusal);
      } else {
        setPushed(outcome.commit);
        setPending([]);
        setComment('');
        onPushed();
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div>
      <h2>Changes to push</h2>
      {pushed && (
        <p class="ok" role="status" data-testid="pushed">
          Pushed as commit <code>{shortId(pushed)}</code>. <a href={`${base}/history`}>See it in the history</a>.
        </p>
      )}
      {requested !== undefined && (
        <p class="ok" role="status" data-testid="requested">
          Change request {requested} opened. <a href={`${base}/requests`}>Review it under Change requests</a>.
        </p>
      )}
      {pending.length === 0 ? (
        <Empty>
          No changes collected. Edit values, create keys or edit files under <a href={`${base}/keys`}>Keys</a>; they
          gather here and go to the server together, as one commit.
        </Empty>
      ) : (
        <form onSubmit={push} class="stack">
          {refusal !== undefined && (
            <p class="error" role="alert" data-testid="refusal">
              <strong>The server refused the push; nothing changed.</strong> Reason: {refusal}
            </p>
          )}
          {error !== undefined && <ErrorNote error={error} prefix="The push failed" />}
          <ol class="pending">
            {pending.map((change, i) => (
              <li key={i} class={refused === i ? 'refused' : ''} data-index={i}>
                <span>{describe(change)}</span>
                <button
                  type="button"
                  class="small"
                  aria-label={`Remove change ${i + 1}: ${describe(change)}`}
                  onClick={() => {
                    setPending(pending.filter((_, j) => j !== i));
                    setRefusal(undefined);
                  }}
                >
                  Remove
                </button>
                {refused === i && (
                  <p class="error-inline" data-testid="refusal-here">
                    Refused: {refusal}
                  </p>
                )}
              </li>
            ))}
          </ol>
          <label for="change-comment">Change comment</label>
          <textarea
            id="change-comment"
            rows={2}
            required
            placeholder="Why this change (the commit message)"
            value={comment}
            onInput={(e) => setComment((e.currentTarget as HTMLTextAreaElement).value)}
          />
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Pushing…' : `Push ${pending.length} change${pending.length === 1 ? '' : 's'}`}
            </button>
            <button type="button" disabled={busy} onClick={request}>
              Open a change request
            </button>
            <button
              type="button"
              onClick={() => {
                setPending([]);
                setRefusal(undefined);
              }}
            >
              Discard all
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
