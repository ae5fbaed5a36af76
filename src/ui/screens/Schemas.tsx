/**
 * The repository's schemas document (schemas.yaml, docs/schemas.md): key schemas, file formats and
 * schemas, context rules. Read and replaced through the admin API, as `cfghub schemas show|set`
 * do, so it needs an admin token. The document is edited as YAML, as the file holds it; saving
 * first shows the server's dry run of the same request (the refusal listing what existing values
 * and files break, or the commit it would make), and writes only once the user confirms.
 */
import { useState } from 'preact/hooks';
import { parse, stringify } from 'yaml';
import {
  adminSchemas,
  previewSchemas,
  saveSchemas,
  type AdminSession,
  type SchemasChange,
  type SchemasDocument,
} from '../admin';
import { ClientError, type RepoRef } from '../api';
import { ErrorNote, Loaded, shortId, useLoad } from '../components';
import { CommentField, PreviewStep, ReasonShown, usePreviewStep } from '../DryRunPreview';

/** The document as YAML, its empty lists left out (as schemas.yaml leaves them out); nothing for no schemas. */
function asYaml(doc: SchemasDocument): string {
  const shown = Object.fromEntries(
    Object.entries(doc).filter(([, value]) => !(Array.isArray(value) && value.length === 0)),
  );
  return Object.keys(shown).length === 0 ? '' : stringify(shown);
}

/** The editor's text as a document: YAML (JSON is YAML too); empty is the empty document. */
function documentOf(text: string): SchemasDocument {
  const parsed: unknown = text.trim() === '' ? {} : parse(text, { maxAliasCount: 0 });
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('schemas.yaml holds a mapping (keys:, files:, rules:)');
  return parsed as SchemasDocument;
}

const count = (doc: SchemasDocument, field: string) => (Array.isArray(doc[field]) ? doc[field].length : 0);

export function SchemasScreen({ repo, admin }: { repo: RepoRef; admin?: AdminSession }) {
  if (!admin)
    return (
      <div>
        <h2>Schemas</h2>
        <p class="note" data-testid="schemas-need-admin">
          The schemas document is read and changed through the admin API: <a href="#/signin">sign in</a> with an admin
          token (<em>For the administration of every repository</em>). On the command line,{' '}
          <code>cfghub schemas show|set</code> does the same.
        </p>
      </div>
    );
  return <SchemasEditor repo={repo} admin={admin} />;
}

function SchemasEditor({ repo, admin }: { repo: RepoRef; admin: AdminSession }) {
  const [round, setRound] = useState(0);
  const [saved, setSaved] = useState<SchemasChange>();
  const [load] = useLoad(() => adminSchemas(admin, repo), [repo.account, repo.repository, admin.token, round]);
  return (
    <div>
      <h2>Schemas</h2>
      {saved && (
        <p class="ok" role="status" data-testid="schemas-saved">
          {saved.outcome === 'applied' ? (
            <>
              Saved as commit <code>{shortId(saved.commit)}</code>.
            </>
          ) : (
            'Nothing to save: the repository already holds this document.'
          )}
        </p>
      )}
      <Loaded load={load} what="the schemas document">
        {(doc) => (
          <SchemasForm
            key={JSON.stringify(doc)}
            repo={repo}
            admin={admin}
            current={doc}
            onPreview={() => setSaved(undefined)}
            onSaved={(result) => {
              setSaved(result);
              if (result.outcome === 'applied') setRound((n) => n + 1);
            }}
          />
        )}
      </Loaded>
    </div>
  );
}

function SchemasForm({
  repo,
  admin,
  current,
  onPreview,
  onSaved,
}: {
  repo: RepoRef;
  admin: AdminSession;
  current: SchemasDocument;
  /** Called as a new preview starts: what an earlier save said is no longer news. */
  onPreview: () => void;
  /** Called with what the save made (the commit, or nothing when the document was the same). */
  onSaved: (result: SchemasChange) => void;
}) {
  const [text, setText] = useState(() => asYaml(current));
  const [comment, setComment] = useState('');
  const step = usePreviewStep<SchemasDocument>();
  const { busy, error, preview } = step;

  /** The Preview step: the same request as a dry run; nothing is written. */
  const showPreview = (e: Event) => {
    e.preventDefault();
    onPreview();
    let doc: SchemasDocument;
    try {
      doc = documentOf(text);
    } catch (err) {
      return step.setError(new Error(`schemas.yaml is not valid YAML: ${(err as Error).message}`));
    }
    return step.show(doc, (schemas) => previewSchemas(admin, repo, schemas));
  };

  const confirm = () => step.confirm(async (doc) => onSaved(await saveSchemas(admin, repo, doc, comment.trim())));

  return (
    <form class="stack" onSubmit={showPreview} data-testid="schemas-form">
      <p data-testid="schemas-summary">
        Now: {count(current, 'keys')} key schemas, {count(current, 'files')} file schemas, {count(current, 'rules')}{' '}
        context rules. Every write to the repository is checked against them (see the docs'{' '}
        <em>Schemas and dry runs</em>
        ).
      </p>
      {error instanceof ClientError && error.status === 409 ? (
        <div class="error" role="alert" data-testid="schemas-refusal">
          <strong>The server refused the schemas; nothing was written.</strong> Reason:{' '}
          <ReasonShown reason={error.message} />
        </div>
      ) : (
        error !== undefined && <ErrorNote error={error} prefix="The schemas were not saved" />
      )}
      <label for="schemas-text">schemas.yaml</label>
      <textarea
        id="schemas-text"
        class="code"
        rows={14}
        spellcheck={false}
        readOnly={preview !== undefined}
        placeholder={'keys:\n  - key: db.port\n    schema: {type: integer, minimum: 1}'}
        value={text}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <CommentField id="schemas-comment" step={step} comment={[comment, setComment]} />
      {preview ? (
        <PreviewStep
          step={step}
          confirmLabel="Confirm and save the schemas"
          busyLabel="Saving…"
          backLabel="Back to editing"
          refusedLabel="The server would refuse these schemas; nothing would be written."
          onConfirm={confirm}
        />
      ) : (
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Previewing…' : 'Preview the schemas change'}
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              setText(asYaml(current));
              step.setError(undefined);
            }}
          >
            Undo my edits
          </button>
        </div>
      )}
    </form>
  );
}
