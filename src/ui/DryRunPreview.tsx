/**
 * What a write would do, as the server's dry run tells it (`Dry-Run: true` on the same request,
 * docs/schemas.md): whether it would commit or why it would be refused, the keys and files it
 * changes, how many contexts would read something else and, per context, each key's and rendered
 * file's value before and after. Every console write shows it before the user confirms (the
 * Changes tab, the schemas editor, a revert in the history, a tag's restore) and a change request
 * shows it for its apply. Secured values
 * come sealed from the server unless the request opened their group; they are shown as locked.
 */
import { useState } from 'preact/hooks';
import type { DryRunAnswer } from '../api/answers';
import { ClientError } from './api';
import { CodeCell, CodeRowHeader, LockIcon, Table, useRequest, valueText } from './components';

type Shown = { val?: unknown; content?: string; encryption?: string; truncated?: true };

/** One side of a change: nothing (the key or file does not resolve there), locked, or the value. */
function Side({ side, file }: { side?: Shown; file?: boolean }) {
  if (side === undefined) return <span class="none">(none)</span>;
  if (side.encryption !== undefined)
    return (
      <span class="locked">
        <LockIcon /> locked ({side.encryption})
      </span>
    );
  const text = file ? (side.content ?? '') : valueText(side.val);
  return (
    <>
      {file ? <pre class="rendered">{text}</pre> : <span>{text}</span>}
      {side.truncated && <span class="badge">cut</span>}
    </>
  );
}

/** Where a schemas refusal's list of breaks is cut: before each break and before its "and N more". */
const BREAK = /; (?=(?:key|file) \S.* (?:at|rendered for) |context \S+ breaks schemas\.yaml |and \d+ more$)/;
const SCHEMAS_BROKEN = /^(the change breaks the repository's schemas \(\d+ breaks?\)): /;

/**
 * A refusal's reason as the server gave it; when it is the schemas check's, what breaks is shown as
 * a list (the first 20 the server names, then its count of the others).
 */
export function ReasonShown({ reason }: { reason: string }) {
  const head = SCHEMAS_BROKEN.exec(reason);
  if (!head) return <span class="reason">{reason}</span>;
  return (
    <span class="reason">
      {head[1]}:
      <ul class="breaks" data-testid="breaks">
        {reason
          .slice(head[0].length)
          .split(BREAK)
          .map((item, i) => (
            <li key={i}>{item}</li>
          ))}
      </ul>
    </span>
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function DryRunPreview({
  answer,
  refusedLabel = 'The server would refuse this change; nothing would be written.',
}: {
  answer: DryRunAnswer;
  /** The words before a refusal's reason. */
  refusedLabel?: string;
}) {
  const { changed, contexts } = answer;
  return (
    <section class="preview" aria-label="Preview" data-testid="preview" data-outcome={answer.outcome}>
      {answer.outcome === 'refused' && (
        <div class="error" role="alert" data-testid="preview-refusal">
          <strong>{refusedLabel}</strong> Reason: <ReasonShown reason={answer.refusal ?? ''} />
        </div>
      )}
      {answer.outcome === 'unchanged' && (
        <p class="note" role="status" data-testid="preview-summary">
          This would change nothing: the repository already holds it.
        </p>
      )}
      {answer.outcome === 'applied' && (
        <>
          <p role="status" data-testid="preview-summary">
            Would commit on <code>{answer.head.slice(0, 12)}</code>:{' '}
            {[
              changed.keys.length ? plural(changed.keys.length, 'key') : '',
              changed.files.length ? plural(changed.files.length, 'file') : '',
              changed.schemas ? 'the schemas document' : '',
            ]
              .filter(Boolean)
              .join(', ') || 'no key or file'}{' '}
            changed; {contexts.changed} of {plural(contexts.considered, 'context')} would read something else.
          </p>
          {(changed.keys.length > 0 || changed.files.length > 0) && (
            <ul class="changed" data-testid="preview-changed">
              {changed.keys.map((key) => (
                <li key={`k${key}`}>
                  key <code>{key}</code>
                </li>
              ))}
              {changed.files.map((file) => (
                <li key={`f${file.path}\u0000${file.context}`}>
                  file <code>{file.path}</code> for <code>{file.context}</code>
                </li>
              ))}
            </ul>
          )}
          {contexts.listed.length > 0 && (
            <Table
              columns={['Context', 'Key or file', 'Before', 'After']}
              caption="What each context would read before and after"
            >
              {contexts.listed.flatMap((context) => [
                ...context.keys.map((key) => (
                  <tr key={`${context.context}\u0000k${key.key}`} data-context={context.context} data-key={key.key}>
                    <CodeRowHeader>{context.context}</CodeRowHeader>
                    <CodeCell>{key.key}</CodeCell>
                    <td class="before">
                      <Side side={key.before} />
                    </td>
                    <td class="after">
                      <Side side={key.after} />
                    </td>
                  </tr>
                )),
                ...context.files.map((file) => (
                  <tr
                    key={`${context.context}\u0000f${file.path}`}
                    data-context={context.context}
                    data-file={file.path}
                  >
                    <CodeRowHeader>{context.context}</CodeRowHeader>
                    <td>
                      file <code>{file.path}</code>
                    </td>
                    <td class="before">
                      <Side side={file.before} file />
                    </td>
                    <td class="after">
                      <Side side={file.after} file />
                    </td>
                  </tr>
                )),
              ])}
            </Table>
          )}
          {contexts.more > 0 && (
            <p class="note">And {plural(contexts.more, 'more context')} that would read something else (not listed).</p>
          )}
        </>
      )}
    </section>
  );
}

/**
 * The state of a write with a Preview step: the write (`W`: what will be sent) with its dry-run
 * answer while the user decides, whether a request is under way, and the last request's error.
 */
export function usePreviewStep<W>() {
  const { busy, error, setError, run: request } = useRequest();
  const [preview, setPreview] = useState<{ readonly write: W; readonly answer: DryRunAnswer }>();
  // A request that fails ends the Preview step: what was previewed is no longer what would be written.
  const run = (work: () => Promise<void>) =>
    request(() =>
      work().catch((err: unknown) => {
        setPreview(undefined);
        throw err;
      }),
    );
  return {
    busy,
    error,
    setError,
    preview,
    /** Runs another request of the screen under the same busy flag and error. */
    run,
    back: () => setPreview(undefined),
    /** The Preview step: the write as a dry run (nothing is written), kept with its answer. */
    show: (write: W, dryRun: (write: W) => Promise<DryRunAnswer>) =>
      run(async () => setPreview({ write, answer: await dryRun(write) })),
    /** The previewed write, confirmed: sent as it was previewed. */
    confirm: (commit: (write: W, answer: DryRunAnswer) => Promise<void>) =>
      run(async () => {
        if (!preview) return;
        await commit(preview.write, preview.answer);
        setPreview(undefined);
      }),
  };
}

/**
 * A confirmed write, sent with `If-Match` on the head its preview was made on: when the server
 * answers 412 (another write came in between), nothing was written and the user is asked for a
 * new preview of `what` ("the changes", "the revert").
 */
export async function onPreviewedHead<T>(write: () => Promise<T>, what: string): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ClientError && err.status === 412)
      throw new Error(
        `The repository changed since the preview (${err.message}); nothing was written. Preview ${what} again.`,
      );
    throw err;
  }
}

/** Where a write with a Preview step stands: its dry run's answer while the user decides, a request under way, going back. */
export interface PreviewState {
  readonly busy: boolean;
  readonly preview?: { readonly answer: DryRunAnswer };
  readonly back: () => void;
}

/**
 * The comment of a write with a Preview step (its commit message), labelled; read-only while the
 * preview is shown, so that what is confirmed is what was previewed.
 */
export function CommentField({
  id,
  step,
  comment: [comment, setComment],
  label = 'Change comment',
  placeholder = 'Why this change (the commit message)',
  multiline = false,
}: {
  id: string;
  step: PreviewState;
  comment: [string, (comment: string) => void];
  label?: string;
  placeholder?: string;
  /** A textarea, and the comment required. */
  multiline?: boolean;
}) {
  const field = {
    id,
    readOnly: step.preview !== undefined,
    placeholder: placeholder || undefined,
    value: comment,
    onInput: (e: Event) => setComment((e.currentTarget as HTMLInputElement).value),
  };
  return (
    <>
      <label for={id}>{label}</label>
      {multiline ? <textarea rows={2} required {...field} /> : <input type="text" {...field} />}
    </>
  );
}

/**
 * The Preview step on screen (while `step` holds a preview): the dry run's answer, then confirm
 * (only a write that would commit) or go back.
 */
export function PreviewStep({
  step: { busy, preview, back },
  confirmLabel,
  busyLabel,
  backLabel,
  refusedLabel,
  onConfirm,
}: {
  step: PreviewState;
  confirmLabel: string;
  busyLabel: string;
  backLabel: string;
  refusedLabel?: string;
  onConfirm: () => void;
}) {
  if (!preview) return null;
  return (
    <>
      <h3>Preview</h3>
      <DryRunPreview answer={preview.answer} refusedLabel={refusedLabel} />
      <div class="buttons">
        <button
          type="button"
          class="primary"
          disabled={busy || preview.answer.outcome !== 'applied'}
          onClick={onConfirm}
        >
          {busy ? busyLabel : confirmLabel}
        </button>
        <button type="button" disabled={busy} onClick={back}>
          {backLabel}
        </button>
      </div>
    </>
  );
}
