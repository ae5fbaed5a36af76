/**
 * What an application pulls: a context chosen level by level (items from /rest/info), then
 * `/rest/pull` with the winning value's context (`Include-Value-Context`) beside each key and,
 * on demand, why it won (`/rest/explain`, Explain.tsx); and the files rendered.
 */
import { useState } from 'preact/hooks';
import { pull, type PulledProperty, type RepoInfo, type RepoRef } from '../api';
import { ContextPicker, Empty, LockIcon, Loaded, Table, WILDCARD, useLoad, valueText } from '../components';
import { ExplainPanel } from './Explain';
import type { RepoProps } from './Repository';

export function ResolvedScreen({ repo, info, round }: RepoProps & { info: RepoInfo; round: number }) {
  const [context, setContext] = useState<string[]>(info.context.map(() => WILDCARD));
  const contextText = context.join(';');
  const [load] = useLoad(() => pull(repo, contextText), [repo.account, repo.repository, contextText, round]);

  return (
    <div>
      <ContextPicker
        idPrefix="resolve-context"
        legend="Context an application asks for"
        info={info}
        value={context}
        onChange={setContext}
      />
      <p class="hint">
        The same as{' '}
        <code>
          curl -H 'Context: {contextText}' …/rest/pull/{repo.account}/{repo.repository}
        </code>
      </p>
      <Loaded load={load} what="the pull">
        {(answer) => {
          const keys = Object.keys(answer.properties ?? {});
          const files = Object.entries(answer.files ?? {});
          return (
            <>
              <h2>
                Properties for <code data-testid="pulled-context">{answer.context}</code>
              </h2>
              {keys.length === 0 ? (
                <Empty>No key has a value for this context.</Empty>
              ) : (
                <Table
                  class="resolved"
                  caption={`Resolved properties for ${answer.context}`}
                  columns={['Key', 'Value', 'Type', 'Won by the value of context']}
                >
                  {keys.map((key) => (
                    <ResolvedRow
                      key={`${contextText} ${key}`}
                      repo={repo}
                      keyName={key}
                      p={answer.properties[key]}
                      context={contextText}
                    />
                  ))}
                </Table>
              )}
              <h2>Files</h2>
              {files.length === 0 ? (
                <Empty>No file applies to this context.</Empty>
              ) : (
                files.map(([path, file]) => (
                  <section key={path} class="file" aria-label={`File ${path}`}>
                    <h3>
                      <code>{path}</code> <span class="hint">{file['content-type']}</span>
                    </h3>
                    {file.encryption ? (
                      <p class="locked">
                        <LockIcon /> locked: the file is in a security group
                      </p>
                    ) : (
                      <pre tabIndex={0}>{file.content}</pre>
                    )}
                    {file.unresolved && <p class="error-inline">Unresolved keys: {file.unresolved.join(', ')}</p>}
                    {file.encrypted && <p class="error-inline">Locked keys: {file.encrypted.join(', ')}</p>}
                  </section>
                ))
              )}
            </>
          );
        }}
      </Loaded>
    </div>
  );
}

/** One key of the pull, and under it, when asked, the explanation of why its value won. */
function ResolvedRow({
  repo,
  keyName,
  p,
  context,
}: {
  repo: RepoRef;
  keyName: string;
  p: PulledProperty;
  context: string;
}) {
  const [open, setOpen] = useState(false);
  const panelId = `explain-${keyName.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <>
      <tr data-key={keyName}>
        <th scope="row">
          <code>{keyName}</code>
          {p.deprecated && <span class="badge warn">deprecated</span>}
          {p.comment && <div class="readme">{p.comment}</div>}
        </th>
        <td class="value" data-label="Value">
          {p.encryption ? (
            <span class="locked">
              <LockIcon /> locked (sealed)
            </span>
          ) : (
            valueText(p.val)
          )}
        </td>
        <td data-label="Type">{p.type ?? 'Text'}</td>
        <td data-label="Won by the value of context">
          <code data-testid="won-by">{(p.context ?? []).join(';')}</code>{' '}
          <button
            type="button"
            class="small"
            aria-expanded={open}
            aria-controls={open ? panelId : undefined}
            onClick={() => setOpen(!open)}
          >
            {open ? 'Hide why' : 'Why?'}
            <span class="visually-hidden"> {keyName} resolves so</span>
          </button>
        </td>
      </tr>
      {open && (
        <tr class="explain-row" data-explains={keyName}>
          <td colSpan={4}>
            <ExplainPanel repo={repo} keyName={keyName} context={context} id={panelId} />
          </td>
        </tr>
      )}
    </>
  );
}
