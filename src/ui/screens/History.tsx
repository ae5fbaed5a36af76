/**
 * The commits (`/rest/history`), newest first, each with its comment, application, token label,
 * time and changes key by key and value by value, and a revert (previewed first: the same revert
 * as a dry run, context by context, then confirmed on the previewed head); and the difference
 * between two points (`/rest/diff`: tag, commit or date), also resolved for a context.
 */
import { useEffect, useState } from 'preact/hooks';
import { diff, history, type Changes, type Commit, type Diff, type RepoInfo } from '../api';
import {
  CodeRowHeader,
  ContextPicker,
  Empty,
  ErrorNote,
  formatDate,
  Loaded,
  Loading,
  RollbackOutcome,
  shortId,
  Table,
  useLoad,
  valueText,
  WILDCARD,
} from '../components';
import type { RepoProps } from './Repository';
import { CommentField, PreviewStep } from '../DryRunPreview';
import { useRollback } from '../useRollback';

export function HistoryScreen({
  repo,
  info,
  onChanged,
  round,
}: RepoProps & { info: RepoInfo; onChanged: () => void; round: number }) {
  const [older, setOlder] = useState<Commit[]>([]);
  const [next, setNext] = useState<string>();
  const [first] = useLoad(() => history(repo), [repo.account, repo.repository, round]);
  const [moreError, setMoreError] = useState<unknown>();
  const [loadingMore, setLoadingMore] = useState(false);

  useEffect(() => {
    setOlder([]);
    setNext(first.state === 'ok' ? first.data.nextBefore : undefined);
  }, [first]);

  const loadMore = async () => {
    if (!next) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const page = await history(repo, next);
      setOlder((list) => [...list, ...page.commits]);
      setNext(page.nextBefore);
    } catch (err) {
      setMoreError(err);
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <div>
      <DiffForm repo={repo} info={info} />
      <h2>Commits</h2>
      <Loaded load={first} what="the history">
        {(page) =>
          page.commits.length === 0 ? (
            <Empty>No commits.</Empty>
          ) : (
            <>
              <ol class="commits">
                {[...page.commits, ...older].map((commit) => (
                  <CommitItem key={commit.id} commit={commit} repo={repo} onChanged={onChanged} />
                ))}
              </ol>
              {moreError !== undefined && <ErrorNote error={moreError} prefix="Could not load older commits" />}
              {loadingMore && <Loading what="older commits" />}
              {next && !loadingMore && (
                <button type="button" onClick={loadMore}>
                  Load older commits
                </button>
              )}
            </>
          )
        }
      </Loaded>
    </div>
  );
}

function CommitItem({ commit, repo, onChanged }: { commit: Commit; repo: RepoProps['repo']; onChanged: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [comment, setComment] = useState('');
  const step = useRollback(repo, () => {
    setConfirming(false);
    onChanged();
  });
  const { busy, error, preview, done } = step;
  const keyCount = commit.keys?.length ?? 0;
  const fileCount = commit.files?.length ?? 0;

  /** The Preview step: the revert as a dry run; nothing is written. */
  const showPreview = (e: Event) => {
    e.preventDefault();
    void step.show({ kind: 'revert', target: commit.id, comment: comment.trim() || undefined });
  };
  const cancel = () => {
    step.back();
    setConfirming(false);
  };

  return (
    <li class="commit" data-commit={commit.id}>
      <div class="commit-head">
        <span class="comment">{commit.comment.trim() || <em>(no comment)</em>}</span>
        <span class="meta">
          <time dateTime={commit.date}>{formatDate(commit.date)}</time>
          {commit.applicationName && <span> · app {commit.applicationName}</span>}
          {commit.token && <span> · token {commit.token}</span>}
          <span>
            {' '}
            · <code title={commit.id}>{shortId(commit.id)}</code>
          </span>
        </span>
      </div>
      <details>
        <summary>
          Changes: {keyCount} key{keyCount === 1 ? '' : 's'}, {fileCount} file{fileCount === 1 ? '' : 's'}
          {commit.settings ? ', settings' : ''}
        </summary>
        <ChangesView changes={commit} />
      </details>
      {!confirming ? (
        <button
          type="button"
          class="small"
          onClick={() => setConfirming(true)}
          aria-label={`Revert commit ${shortId(commit.id)}: ${commit.comment.split('\n')[0]}`}
        >
          Revert…
        </button>
      ) : (
        <form class="inline-form" onSubmit={showPreview}>
          <CommentField
            id={`revert-${commit.id}`}
            label="Revert comment (optional)"
            placeholder=""
            step={step}
            comment={[comment, setComment]}
          />
          {preview ? (
            <PreviewStep
              step={step}
              confirmLabel="Confirm revert"
              busyLabel="Reverting…"
              backLabel="Back"
              refusedLabel="The server would refuse this revert; nothing would be written."
              onConfirm={() => void step.confirm()}
            />
          ) : (
            <>
              <button type="submit" class="primary small" disabled={busy}>
                {busy ? 'Previewing…' : 'Preview the revert'}
              </button>
              <button type="button" class="small" onClick={cancel}>
                Cancel
              </button>
            </>
          )}
        </form>
      )}
      <RollbackOutcome done={done} error={error} made="Reverted" refused="Revert refused" />
    </li>
  );
}

const stateText = (state?: { value: string | null; active: boolean }) =>
  state ? `${state.value === null ? 'null' : state.value}${state.active ? '' : ' (inactive)'}` : '';

export function ChangesView({ changes }: { changes: Changes }) {
  const keys = changes.keys ?? [];
  const files = changes.files ?? [];
  if (!keys.length && !files.length && !changes.settings && !changes.other?.length && !changes.problems?.length) {
    return <p class="hint">No key, file or setting changed.</p>;
  }
  return (
    <div class="changes">
      {keys.length > 0 && (
        <ul class="key-changes">
          {keys.map((k) => (
            <li key={k.key}>
              <span class={`change ${k.change}`}>{k.change}</span> key <code>{k.key}</code>
              {k.fields && (
                <ul>
                  {Object.entries(k.fields).map(([field, fc]) => (
                    <li key={field}>
                      {field}: <del>{valueText(fc.before)}</del> → <ins>{valueText(fc.after)}</ins>
                    </li>
                  ))}
                </ul>
              )}
              {k.values && k.values.length > 0 && (
                <ul>
                  {k.values.map((v) => (
                    <li key={v.context}>
                      <span class={`change ${v.change}`}>{v.change}</span> <code>{v.context}</code>:{' '}
                      {v.before && <del>{stateText(v.before)}</del>}
                      {v.before && v.after && ' → '}
                      {v.after && <ins>{stateText(v.after)}</ins>}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {files.length > 0 && (
        <ul class="file-changes">
          {files.map((f) => (
            <li key={`${f.path}|${f.context}`}>
              <span class={`change ${f.change}`}>{f.change}</span> file <code>{f.path}</code> for{' '}
              <code>{f.context}</code>
              {!f.active && ' (inactive)'}
            </li>
          ))}
        </ul>
      )}
      {changes.settings && <p>The repository's settings changed.</p>}
      {changes.other && changes.other.length > 0 && <p>Other entries changed: {changes.other.join(', ')}</p>}
      {changes.problems?.map((p) => (
        <p key={p} class="error-inline">
          {p}
        </p>
      ))}
    </div>
  );
}

function DiffForm({ repo, info }: { repo: RepoProps['repo']; info: RepoInfo }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [useContext, setUseContext] = useState(false);
  const [context, setContext] = useState<string[]>(info.context.map(() => WILDCARD));
  const [result, setResult] = useState<
    { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ok'; data: Diff }
  >();

  const compare = async (e: Event) => {
    e.preventDefault();
    setResult({ state: 'loading' });
    try {
      setResult({
        state: 'ok',
        data: await diff(repo, from.trim(), to.trim(), useContext ? context.join(';') : undefined),
      });
    } catch (error) {
      setResult({ state: 'error', error });
    }
  };

  return (
    <details class="diff-box">
      <summary>Compare two points (tag, commit or date)</summary>
      <form onSubmit={compare} class="stack">
        <div class="two">
          <label for="diff-from">
            From <span class="hint">(tag, commit id or date like 2026-11-22T10:00:00Z)</span>
            <input
              id="diff-from"
              list="diff-points"
              required
              value={from}
              onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <label for="diff-to">
            To <span class="hint">(empty: the head)</span>
            <input
              id="diff-to"
              list="diff-points"
              value={to}
              onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <datalist id="diff-points">
            {info.tags.map((t) => (
              <option key={t.name} value={t.name} />
            ))}
          </datalist>
        </div>
        <label class="check" for="diff-use-context">
          <input
            id="diff-use-context"
            type="checkbox"
            checked={useContext}
            onChange={(e) => setUseContext((e.currentTarget as HTMLInputElement).checked)}
          />{' '}
          Also show what an application of one context sees change
        </label>
        {useContext && (
          <ContextPicker idPrefix="diff-context" legend="Context" info={info} value={context} onChange={setContext} />
        )}
        <div>
          <button type="submit" class="primary">
            Compare
          </button>
        </div>
      </form>
      {result?.state === 'loading' && <Loading what="the difference" />}
      {result?.state === 'error' && <ErrorNote error={result.error} prefix="Could not compare" />}
      {result?.state === 'ok' && (
        <div class="diff-result">
          <p>
            From <code>{shortId(result.data.from)}</code> to <code>{shortId(result.data.to)}</code>
          </p>
          <ChangesView changes={result.data} />
          {result.data.resolved && <ResolvedDiffView diff={result.data} />}
        </div>
      )}
    </details>
  );
}

function ResolvedDiffView({ diff }: { diff: Diff }) {
  const r = diff.resolved!;
  const rows = [
    ...Object.entries(r.properties.added ?? {}).map(([k, v]) => ({
      key: k,
      change: 'added',
      before: '',
      after: valueText(v.val),
    })),
    ...Object.entries(r.properties.changed ?? {}).map(([k, v]) => ({
      key: k,
      change: 'modified',
      before: valueText(v.before.val),
      after: valueText(v.after.val),
    })),
    ...Object.entries(r.properties.removed ?? {}).map(([k, v]) => ({
      key: k,
      change: 'deleted',
      before: valueText(v.val),
      after: '',
    })),
  ];
  const fileNames = [
    ...Object.keys(r.files.added ?? {}),
    ...Object.keys(r.files.changed ?? {}),
    ...Object.keys(r.files.removed ?? {}),
  ];
  return (
    <section aria-label="Resolved difference">
      <h3>
        What <code>{r.context}</code> pulls differently
      </h3>
      {rows.length === 0 ? (
        <p class="hint">Its properties are the same at both points.</p>
      ) : (
        <Table columns={['Key', 'Change', 'Before', 'After']}>
          {rows.map((row) => (
            <tr key={row.key}>
              <CodeRowHeader>{row.key}</CodeRowHeader>
              <td>
                <span class={`change ${row.change}`}>{row.change}</span>
              </td>
              <td>
                <del>{row.before}</del>
              </td>
              <td>
                <ins>{row.after}</ins>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {fileNames.length > 0 && <p>Files rendered differently: {fileNames.join(', ')}</p>}
    </section>
  );
}
