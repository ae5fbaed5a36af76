/**
 * Keys with their values per context (`/rest/export`), filtered by key text and by context, and
 * the editors that collect changes for the next push: a value (add, change, deactivate, delete),
 * a new key, a file. Values of a security group the reader has not unlocked arrive sealed
 * (`enc:…`) and are shown as locked, not editable.
 */
import { useRef, useState } from 'preact/hooks';
import { exportRepo, type ExportedFile, type ExportedKey, type RepoInfo } from '../api';
import {
  CodeCell,
  CodeRowHeader,
  ContextInputs,
  ContextPicker,
  Empty,
  FilterBox,
  Loaded,
  matchesFilter,
  Table,
  TextField,
  useLoad,
  ValueShown,
  WILDCARD,
} from '../components';
import type { PendingChange } from '../pending';
import type { RepoProps } from './Repository';
import { VALUE_TYPES } from '../../domain/valueTypes';

const isSealed = (key: { securityGroup?: string }, value: string | null) =>
  key.securityGroup !== undefined && typeof value === 'string' && value.startsWith('enc:');

/** Whether a value's context applies to the filter: each chosen item equals it or the value's item is `*`. */
function contextMatches(context: string, filter: string[]): boolean {
  const items = context.split(';');
  return filter.every(
    (want, i) => want === WILDCARD || items[i] === WILDCARD || items[i]?.toLowerCase() === want.toLowerCase(),
  );
}

type Editor =
  | { kind: 'value'; key: string; context: string[]; value: string; active: boolean; isNew: boolean }
  | { kind: 'new-key'; key: string; vdt: string; readme: string; context: string[]; value: string }
  | { kind: 'file'; path: string; context: string[]; content: string; active: boolean; isNew: boolean };

export function KeysScreen({ repo, info, pending, setPending, round }: RepoProps & { info: RepoInfo; round: number }) {
  const [load] = useLoad(() => exportRepo(repo), [repo.account, repo.repository, round]);
  const [text, setText] = useState('');
  const [contextFilter, setContextFilter] = useState<string[]>(info.context.map(() => WILDCARD));
  const [editor, setEditor] = useState<Editor>();
  const [staged, setStaged] = useState<string>();
  const editorRef = useRef<HTMLDivElement>(null);
  const levels = info.context;
  const anyContext = levels.map(() => WILDCARD);

  const open = (next: Editor) => {
    setEditor(next);
    setStaged(undefined);
    // Focus the editor's first field once it is drawn.
    setTimeout(
      () => editorRef.current?.querySelector<HTMLElement>('input:not([readonly]), textarea, select')?.focus(),
      0,
    );
  };

  const stage = (change: PendingChange, what: string) => {
    setPending([...pending, change]);
    setStaged(`Added to the changes: ${what}. Review and push them under Changes.`);
    setEditor(undefined);
  };

  const stageEditor = (e: Event) => {
    e.preventDefault();
    if (!editor) return;
    const context = editor.context.join(';');
    if (editor.kind === 'value') {
      stage(
        { kind: 'value', key: editor.key, context, value: editor.value, active: editor.active },
        `${editor.key} for ${context}`,
      );
    } else if (editor.kind === 'new-key') {
      stage(
        {
          kind: 'new-key',
          key: editor.key.trim(),
          vdt: editor.vdt,
          readme: editor.readme,
          context,
          value: editor.value,
        },
        `new key ${editor.key.trim()}`,
      );
    } else {
      stage(
        { kind: 'file', path: editor.path.trim(), context, content: editor.content, active: editor.active },
        `file ${editor.path.trim()}`,
      );
    }
  };

  return (
    <div>
      <FilterBox
        id="key-filter"
        label="Filter keys"
        placeholder="part of a key name or readme"
        value={text}
        onChange={setText}
      >
        <button
          type="button"
          onClick={() => open({ kind: 'new-key', key: '', vdt: 'Text', readme: '', context: anyContext, value: '' })}
        >
          New key
        </button>
        <button
          type="button"
          onClick={() => open({ kind: 'file', path: '', context: anyContext, content: '', active: true, isNew: true })}
        >
          New file
        </button>
        {pending.length > 0 && (
          <a
            class="button primary"
            href={`#/r/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}/changes`}
          >
            Review and push {pending.length} change{pending.length === 1 ? '' : 's'}
          </a>
        )}
      </FilterBox>
      <ContextPicker
        idPrefix="key-context"
        legend="Filter by context (values that apply to it)"
        anyLabel="any"
        info={info}
        value={contextFilter}
        onChange={setContextFilter}
      />
      {staged && (
        <p class="ok" role="status">
          {staged}
        </p>
      )}
      {editor && (
        <div class="editor" ref={editorRef}>
          <EditorForm
            editor={editor}
            info={info}
            onChange={setEditor}
            onSubmit={stageEditor}
            onCancel={() => setEditor(undefined)}
          />
        </div>
      )}
      <Loaded load={load} what="the keys">
        {({ keys, files }) => {
          const filtering = contextFilter.some((item) => item !== WILDCARD);
          const shown = keys
            .filter((k) => matchesFilter(text, k.key, k.readme))
            .map((k) => ({ ...k, values: k.values.filter((v) => contextMatches(v.context, contextFilter)) }))
            .filter((k) => !filtering || k.values.length > 0);
          return (
            <>
              <h2>Keys</h2>
              {keys.length === 0 ? (
                <Empty>This repository has no keys yet. Use “New key” to create one.</Empty>
              ) : shown.length === 0 ? (
                <Empty>No key matches the filter.</Empty>
              ) : (
                <KeysTable keys={shown} levels={levels} onEdit={open} onStage={stage} />
              )}
              <FilesList files={files} levels={levels} onEdit={open} onStage={stage} />
            </>
          );
        }}
      </Loaded>
    </div>
  );
}

/** What the key and file lists are given besides their rows: the context levels, and where an edit or a change goes. */
interface ListProps {
  levels: string[];
  onEdit: (editor: Editor) => void;
  onStage: (change: PendingChange, what: string) => void;
}

function KeysTable({ keys, levels, onEdit, onStage }: ListProps & { keys: ExportedKey[] }) {
  return (
    <Table
      class="keys"
      caption={`Keys and their values per context (${levels.join(';')})`}
      columns={['Key', 'Type', `Values per context (${levels.join(';')})`]}
    >
      {keys.map((key) => (
        <tr key={key.key} data-key={key.key}>
          <th scope="row" class="key-cell">
            <code class="key-name">{key.key}</code>
            {key.deprecated && <span class="badge warn">deprecated</span>}
            {key.securityGroup && <span class="badge lock">group {key.securityGroup}</span>}
            {!key.push && <span class="badge">push off</span>}
            {key.readme && <div class="readme">{key.readme}</div>}
            {!key.securityGroup && (
              <div class="row-actions">
                <button
                  type="button"
                  class="small"
                  onClick={() =>
                    onEdit({
                      kind: 'value',
                      key: key.key,
                      context: levels.map(() => WILDCARD),
                      value: '',
                      active: true,
                      isNew: true,
                    })
                  }
                >
                  Add value<span class="visually-hidden"> to {key.key}</span>
                </button>
                <button
                  type="button"
                  class="small danger"
                  onClick={() => onStage({ kind: 'delete-key', key: key.key }, `delete key ${key.key}`)}
                >
                  Delete key<span class="visually-hidden"> {key.key}</span>
                </button>
              </div>
            )}
          </th>
          <td data-label="Type">{key.vdt}</td>
          <td data-label="Values">
            {key.values.length === 0 ? (
              <span class="hint">no values</span>
            ) : (
              <ul class="values">
                {key.values.map((v) => {
                  const sealed = isSealed(key, v.value);
                  const label = `${key.key} for ${v.context}`;
                  return (
                    <li key={v.context} class={v.active ? '' : 'inactive'} data-context={v.context}>
                      <code class="context">{v.context}</code>
                      <ValueShown
                        lockedBy={sealed ? key.securityGroup : undefined}
                        title={`Locked: security group ${key.securityGroup}`}
                        active={v.active}
                      >
                        <span class="value">{v.value === null ? <em>null</em> : v.value}</span>
                      </ValueShown>
                      {!key.securityGroup && (
                        <span class="row-actions">
                          <button
                            type="button"
                            class="small"
                            aria-label={`Edit ${label}`}
                            onClick={() =>
                              onEdit({
                                kind: 'value',
                                key: key.key,
                                context: v.context.split(';'),
                                value: v.value ?? '',
                                active: v.active,
                                isNew: false,
                              })
                            }
                          >
                            Edit
                          </button>
                          <button
                            type="button"
                            class="small"
                            aria-label={`${v.active ? 'Deactivate' : 'Activate'} ${label}`}
                            onClick={() =>
                              onStage(
                                {
                                  kind: 'value',
                                  key: key.key,
                                  context: v.context,
                                  value: v.value ?? '',
                                  active: !v.active,
                                },
                                `${v.active ? 'deactivate' : 'activate'} ${label}`,
                              )
                            }
                          >
                            {v.active ? 'Deactivate' : 'Activate'}
                          </button>
                          <button
                            type="button"
                            class="small danger"
                            aria-label={`Delete ${label}`}
                            onClick={() =>
                              onStage({ kind: 'delete-value', key: key.key, context: v.context }, `delete ${label}`)
                            }
                          >
                            Delete
                          </button>
                        </span>
                      )}
                    </li>
                  );
                })}
              </ul>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

function FilesList({ files, levels, onEdit, onStage }: ListProps & { files: ExportedFile[] }) {
  return (
    <>
      <h2>Files</h2>
      {files.length === 0 ? (
        <Empty>No files. Use “New file” to add a template; it can use keys as {'${ key.name }'}.</Empty>
      ) : (
        <Table
          class="files"
          caption={`Files per context (${levels.join(';')})`}
          columns={['Path', 'Context', 'State', 'Actions']}
        >
          {files.map((f) => {
            const sealed = f.securityGroup !== undefined && f.content.includes('cfghub-encrypted-file');
            const label = `${f.file} for ${f.context}`;
            return (
              <tr key={`${f.file}|${f.context}`}>
                <CodeRowHeader>{f.file}</CodeRowHeader>
                <CodeCell>{f.context}</CodeCell>
                <td>
                  {f.active ? 'active' : 'inactive'}
                  {f.securityGroup && <span class="badge lock">group {f.securityGroup}</span>}
                </td>
                <td>
                  {!f.securityGroup && !sealed && (
                    <span class="row-actions">
                      <button
                        type="button"
                        class="small"
                        aria-label={`Edit file ${label}`}
                        onClick={() =>
                          onEdit({
                            kind: 'file',
                            path: f.file,
                            context: f.context.split(';'),
                            content: f.content,
                            active: f.active,
                            isNew: false,
                          })
                        }
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        class="small danger"
                        aria-label={`Delete file ${label}`}
                        onClick={() =>
                          onStage({ kind: 'delete-file', path: f.file, context: f.context }, `delete file ${label}`)
                        }
                      >
                        Delete
                      </button>
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </Table>
      )}
    </>
  );
}

function EditorForm({
  editor,
  info,
  onChange,
  onSubmit,
  onCancel,
}: {
  editor: Editor;
  info: RepoInfo;
  onChange: (editor: Editor) => void;
  onSubmit: (e: Event) => void;
  onCancel: () => void;
}) {
  const set = (fields: Partial<Editor>) => onChange({ ...editor, ...fields } as Editor);
  const text =
    editor.kind === 'file'
      ? {
          id: 'edit-content',
          label: 'Content',
          rows: 10,
          value: editor.content,
          set: (content: string) => set({ content }),
        }
      : { id: 'edit-value', label: 'Value', rows: 2, value: editor.value, set: (value: string) => set({ value }) };
  const title =
    editor.kind === 'value'
      ? editor.isNew
        ? `Add a value to ${editor.key}`
        : `Change ${editor.key} for ${editor.context.join(';')}`
      : editor.kind === 'new-key'
        ? 'Create a key'
        : editor.isNew
          ? 'Add a file'
          : `Edit file ${editor.path}`;
  const contextFixed = editor.kind !== 'new-key' && !editor.isNew;
  return (
    <form onSubmit={onSubmit} class="stack" aria-label={title}>
      <h2>{title}</h2>
      {editor.kind === 'new-key' && (
        <>
          <TextField id="edit-key" label="Key name" value={editor.key} required onValue={(key) => set({ key })} />
          <label for="edit-vdt">Type</label>
          <select
            id="edit-vdt"
            value={editor.vdt}
            onChange={(e) => set({ vdt: (e.currentTarget as HTMLSelectElement).value })}
          >
            {VALUE_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <TextField id="edit-readme" label="Readme" value={editor.readme} onValue={(readme) => set({ readme })} />
        </>
      )}
      {editor.kind === 'file' && (
        <>
          <TextField
            id="edit-path"
            label="File path"
            value={editor.path}
            required
            readOnly={!editor.isNew}
            onValue={(path) => set({ path })}
          />
        </>
      )}
      {contextFixed ? (
        <p>
          Context: <code>{editor.context.join(';')}</code>
        </p>
      ) : (
        <ContextInputs
          idPrefix="edit-context"
          legend="Context (one item per level, * for any)"
          info={info}
          value={editor.context}
          onChange={(context) => set({ context })}
        />
      )}
      {/* A file's content, or a key's value: what the editor writes. */}
      <label for={text.id}>{text.label}</label>
      <textarea
        id={text.id}
        rows={text.rows}
        spellcheck={false}
        value={text.value}
        onInput={(e) => text.set((e.currentTarget as HTMLTextAreaElement).value)}
      />
      {(editor.kind === 'value' || editor.kind === 'file') && (
        <label class="check" for="edit-active">
          <input
            id="edit-active"
            type="checkbox"
            checked={editor.active}
            onChange={(e) => set({ active: (e.currentTarget as HTMLInputElement).checked })}
          />{' '}
          Active
        </label>
      )}
      <div class="buttons">
        <button type="submit" class="primary">
          Add to changes
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
