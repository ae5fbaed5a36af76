/**
 * The collected changes, pushed as one transaction with a change comment, after a Preview step:
 * the same push as a dry run first (what would be committed or why it would be refused, context
 * by context), then the push itself once the user confirms, made on the head the preview was made
 * on (If-Match), so what is committed is what was shown. A refusal changes nothing; its reason is
 * shown, and beside the change it names (`data[N]`).
 */
import { useState } from 'preact/hooks';
import { createChangeRequest, previewPush, pushChanges, type PushBodyInput, type RepoInfo } from '../api';
import { Empty, ErrorNote, shortId } from '../components';
import { CommentField, onPreviewedHead, PreviewStep, usePreviewStep } from '../DryRunPreview';
import { describe, pushBody, refusedIndex } from '../pending';
import type { RepoProps } from './Repository';

export function ChangesScreen({
  repo,
  pending,
  setPending,
  onPushed,
}: RepoProps & { info: RepoInfo; onPushed: () => void }) {
  const [comment, setComment] = useState('');
  const [refusal, setRefusal] = useState<string>();
  const [pushed, setPushed] = useState<string>();
  const [requested, setRequested] = useState<number>();
  /** The push previewed (its body and the server's dry-run answer), waiting for the user's word. */
  const step = usePreviewStep<PushBodyInput>();
  const { busy, error, preview } = step;

  const start = () => {
    setRefusal(undefined);
    setPushed(undefined);
    setRequested(undefined);
  };

  /** The collected changes as a change request instead: the comment's first line is its title. */
  const request = () => {
    if (!comment.trim())
      return step.setError(new Error('A change request needs a comment: its first line is the title'));
    start();
    return step.run(async () => {
      const [title, ...rest] = comment.trim().split('\n');
      const made = await createChangeRequest(repo, title, pushBody(pending, rest.join('\n').trim()));
      setRequested(made.id);
      setPending([]);
      setComment('');
    });
  };
  const base = `#/r/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`;
  const refusedReason = refusal ?? (preview?.answer.outcome === 'refused' ? preview.answer.refusal : undefined);
  const refused = refusedReason !== undefined ? refusedIndex(refusedReason) : undefined;

  /** The Preview step: the push as a dry run; nothing is written. */
  const showPreview = (e: Event) => {
    e.preventDefault();
    start();
    return step.show(pushBody(pending, comment), (body) => previewPush(repo, body));
  };

  /** The push previewed, confirmed: on the head the preview was made on. */
  const confirm = () =>
    step.confirm(async (body, answer) => {
      const outcome = await onPreviewedHead(() => pushChanges(repo, body, answer.head), 'the changes');
      if (outcome.refusal !== undefined) return setRefusal(outcome.refusal);
      setPushed(outcome.commit);
      setPending([]);
      setComment('');
      onPushed();
    });

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
        <form onSubmit={showPreview} class="stack">
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
                    step.back();
                  }}
                >
                  Remove
                </button>
                {refused === i && (
                  <p class="error-inline" data-testid="refusal-here">
                    Refused: {refusedReason}
                  </p>
                )}
              </li>
            ))}
          </ol>
          <CommentField id="change-comment" step={step} comment={[comment, setComment]} multiline />
          {preview ? (
            <PreviewStep
              step={step}
              confirmLabel={`Confirm and push ${pending.length} change${pending.length === 1 ? '' : 's'}`}
              busyLabel="Pushing…"
              backLabel="Back to the changes"
              onConfirm={confirm}
            />
          ) : (
            <div class="buttons">
              <button type="submit" class="primary" disabled={busy}>
                {busy ? 'Previewing…' : `Preview ${pending.length} change${pending.length === 1 ? '' : 's'}`}
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
          )}
        </form>
      )}
    </div>
  );
}
