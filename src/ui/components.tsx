/** Small pieces every screen uses: loading, requests, error and empty states, and the context picker. */
import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ClientError, type RepoInfo } from './api';

export type Load<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'error'; readonly error: unknown }
  | { readonly state: 'ok'; readonly data: T; readonly refreshing?: boolean };

/**
 * Runs `load` when `deps` change; the newest call wins. While a new answer loads, the last one
 * stays on screen marked as refreshing (no flicker, and what a screen showed, such as the outcome
 * of a push, stays in place).
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Load<T>, () => void] {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const mine = ++latest.current;
    setResult((last) => (last.state === 'ok' ? { ...last, refreshing: true } : { state: 'loading' }));
    load().then(
      (data) => mine === latest.current && setResult({ state: 'ok', data }),
      (error: unknown) => mine === latest.current && setResult({ state: 'error', error }),
    );
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return [result, reload];
}

/**
 * A request the user starts (a button, a form): `busy` while it is under way, and its error, kept
 * until the next request starts.
 */
export function useRequest() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state" role="status">
      Loading {what}…
    </p>
  );
}

/** The server's error as it is: status, code and message. */
export function ErrorNote({ error, prefix }: { error: unknown; prefix?: string }) {
  if (error instanceof ClientError) {
    return (
      <p class="error" role="alert">
        {prefix ? `${prefix}: ` : ''}
        <strong>
          {error.status ? `${error.status} ` : ''}
          {error.code}
        </strong>{' '}
        {error.message}
      </p>
    );
  }
  return (
    <p class="error" role="alert">
      {prefix ? `${prefix}: ` : ''}
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Renders a load's three states; `children` renders the data. */
export function Loaded<T>({
  load,
  what,
  children,
}: {
  load: Load<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (load.state === 'loading') return <Loading what={what} />;
  if (load.state === 'error') return <ErrorNote error={load.error} prefix={`Could not load ${what}`} />;
  return (
    <div aria-busy={load.refreshing ? 'true' : undefined}>
      {load.refreshing && (
        <p class="refreshing" role="status">
          Updating {what}…
        </p>
      )}
      {children(load.data)}
    </div>
  );
}

export const WILDCARD = '*';

interface ContextFieldsProps {
  idPrefix: string;
  /** The repository's levels, widest first, and the items in use at each (from /rest/info). */
  info: Pick<RepoInfo, 'context' | 'contextElements'>;
  value: string[];
  onChange: (next: string[]) => void;
  legend: string;
}

/**
 * The fieldset both context controls share: one labelled control per level, widest first; `control`
 * draws a level's control, and its `set` changes that level's item alone.
 */
function ContextFields({
  idPrefix,
  info,
  value,
  onChange,
  legend,
  control,
}: ContextFieldsProps & {
  /** A level's control: its id, the level's item (`*` for any), the items in use at the level, and `set`. */
  control: (id: string, current: string, items: string[], set: (item: string) => void) => JSX.Element;
}) {
  return (
    <fieldset class="context-picker">
      <legend>{legend}</legend>
      {info.context.map((level, i) => (
        <label key={level} for={`${idPrefix}-${i}`}>
          <span>{level}</span>
          {control(`${idPrefix}-${i}`, value[i] ?? WILDCARD, info.contextElements[level] ?? [], (item) => {
            const next = [...value];
            next[i] = item;
            onChange(next);
          })}
        </label>
      ))}
    </fieldset>
  );
}

/**
 * One select per context level, widest first, each listing the items in use at that level
 * (from /rest/info's context elements) and `*`.
 */
export function ContextPicker(props: ContextFieldsProps & { anyLabel?: string }) {
  const { anyLabel = '* (any)' } = props;
  return (
    <ContextFields
      {...props}
      control={(id, current, items, set) => (
        <select id={id} value={current} onChange={(e) => set((e.currentTarget as HTMLSelectElement).value)}>
          <option value={WILDCARD}>{anyLabel}</option>
          {items.map((item) => (
            <option key={item} value={item}>
              {item}
            </option>
          ))}
        </select>
      )}
    />
  );
}

/** Free-text context items, one input per level, suggesting the items in use. */
export function ContextInputs(props: ContextFieldsProps) {
  return (
    <ContextFields
      {...props}
      control={(id, current, items, set) => (
        <>
          <input
            id={id}
            list={`${id}-items`}
            value={current}
            autocomplete="off"
            onInput={(e) => set((e.currentTarget as HTMLInputElement).value.trim() || WILDCARD)}
          />
          <datalist id={`${id}-items`}>
            <option value={WILDCARD} />
            {items.map((item) => (
              <option key={item} value={item} />
            ))}
          </datalist>
        </>
      )}
    />
  );
}

/** A labelled one-line text field: `onValue` is told each new value. */
export function TextField({
  id,
  label,
  value,
  required,
  readOnly,
  onValue,
}: {
  id: string;
  label: ComponentChildren;
  value: string;
  required?: boolean;
  readOnly?: boolean;
  onValue: (value: string) => void;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        required={required}
        readOnly={readOnly}
        onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
      />
    </>
  );
}

export const shortId = (id: string) => id.slice(0, 12);

export function formatDate(iso: string): string {
  return iso.replace('T', ' ').replace('Z', ' UTC');
}

/** A value as text: JSON for objects (List and Map pulls), `null` shown as such. */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A padlock drawn inline (emoji fonts are not everywhere), hidden from screen readers: the text says "locked". */
export function LockIcon() {
  return (
    <svg class="lock-icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M4 7V5a4 4 0 0 1 8 0v2h1v8H3V7h1zm2 0h4V5a2 2 0 0 0-4 0v2z" fill="currentColor" />
    </svg>
  );
}

/** A row's heading cell of a Table that names the row in code: a key, a path, a context, an id. */
export function CodeRowHeader({ children }: { children: ComponentChildren }) {
  return (
    <th scope="row">
      <code>{children}</code>
    </th>
  );
}

/** A cell of a Table that shows code: a context, a path, an id. */
export function CodeCell({ children }: { children: ComponentChildren }) {
  return (
    <td>
      <code>{children}</code>
    </td>
  );
}

/** A column of a Table: its heading, and `num` for a right-aligned number column. */
export type Column = string | { readonly label: string; readonly num?: boolean };

/**
 * Every table of the console: scrollable in its wrapper on a narrow screen, a caption for screen
 * readers when one is given, a header row of column headings; `children` are the body's rows.
 */
export function Table({
  columns,
  caption,
  class: className,
  children,
}: {
  columns: Column[];
  caption?: ComponentChildren;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class={className}>
        {caption !== undefined && <caption class="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.label} scope="col" class={column.num ? 'num' : undefined}>
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** The filter box of a list: a labelled search field in the toolbar; `children` follow it there (the list's buttons). */
export function FilterBox({
  id,
  label,
  placeholder,
  value,
  onChange,
  children,
}: {
  id: string;
  label: string;
  placeholder: string;
  value: string;
  onChange: (text: string) => void;
  children?: ComponentChildren;
}) {
  return (
    <div class="toolbar">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="search"
        placeholder={placeholder}
        value={value}
        onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value)}
      />
      {children}
    </div>
  );
}

/**
 * A value of a key as the console shows it: sealed by a security group the reader has not
 * unlocked (`lockedBy` names it), it is shown as locked, never as its sealed text; `children` draw
 * it otherwise. An inactive value is marked so.
 */
export function ValueShown({
  lockedBy,
  title,
  active,
  children,
}: {
  lockedBy?: string;
  title?: string;
  active: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      {lockedBy !== undefined ? (
        <span class="locked" title={title}>
          <LockIcon /> locked ({lockedBy})
        </span>
      ) : (
        children
      )}
      {!active && <span class="badge">inactive</span>}
    </>
  );
}

/** Whether a text is in a filter's text: an empty filter holds everything; case is ignored. */
export const matchesFilter = (filter: string, ...texts: string[]) => {
  const needle = filter.trim().toLowerCase();
  return !needle || texts.some((text) => text.toLowerCase().includes(needle));
};

/** What a rollback (useRollback) came to: the commit it made (`made`: "Reverted", "Restored"), or the server's refusal. */
export function RollbackOutcome({
  done,
  error,
  made,
  refused,
}: {
  done?: string;
  error: unknown;
  made: string;
  refused: string;
}) {
  return (
    <>
      {done && (
        <p class="ok" role="status">
          {made} as commit <code>{shortId(done)}</code>.
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} prefix={refused} />}
    </>
  );
}
