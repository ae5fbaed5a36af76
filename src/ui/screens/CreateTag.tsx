/**
 * Create a tag from the console: the admin API's `POST /rest/admin/repositories/{a}/{r}/tags`,
 * which tags the repository's head (name and comment, nothing else: the API takes no other
 * point). Only with an admin token; without one the control says so and how to get one. A refusal
 * (a bad name, a name in use) is the server's message, shown beside the name field.
 */
import { useState } from 'preact/hooks';
import type { RepoRef } from '../api';
import { createTag, type AdminSession, type AdminTag } from '../admin';
import { ErrorNote, shortId, useRequest } from '../components';

export function CreateTag({ repo, admin, onCreated }: { repo: RepoRef; admin?: AdminSession; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [comment, setComment] = useState('');
  const { busy, error, run } = useRequest();
  const [created, setCreated] = useState<AdminTag>();

  if (!admin) {
    return (
      <div class="note" data-testid="create-tag-needs-admin">
        <h3>Create a tag</h3>
        <p>
          Creating a tag needs an <strong>admin token</strong> (the admin API does it; a client token cannot).{' '}
          <a href="#/signin">Sign in with an admin token</a>, or run{' '}
          <code>
            cfghub tag create {repo.account}/{repo.repository} NAME --comment TEXT
          </code>{' '}
          on the server's host.
        </p>
      </div>
    );
  }

  const submit = (e: Event) => {
    e.preventDefault();
    setCreated(undefined);
    return run(async () => {
      const tag = await createTag(admin, repo, name.trim(), comment.trim());
      setCreated(tag);
      setName('');
      setComment('');
      onCreated();
    });
  };

  return (
    <form class="create-tag stack" onSubmit={submit} aria-labelledby="create-tag-title">
      <h3 id="create-tag-title">Create a tag</h3>
      <p class="hint">The tag marks the repository's head, its newest commit: the admin API tags the head only.</p>
      <label for="tag-name">Tag name</label>
      <input
        id="tag-name"
        value={name}
        autocomplete="off"
        spellcheck={false}
        required
        aria-invalid={error !== undefined ? 'true' : undefined}
        aria-describedby={error !== undefined ? 'tag-name-error' : undefined}
        onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
      />
      {error !== undefined && (
        <div id="tag-name-error" data-testid="tag-refusal">
          <ErrorNote error={error} prefix="Tag refused" />
        </div>
      )}
      <label for="tag-comment">Comment (the tag's readme)</label>
      <input
        id="tag-comment"
        value={comment}
        autocomplete="off"
        onInput={(e) => setComment((e.currentTarget as HTMLInputElement).value)}
      />
      <div>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create tag'}
        </button>
      </div>
      {created && (
        <p class="ok" role="status" data-testid="tag-created">
          Tag <code>{created.name}</code> created at commit <code>{shortId(created.commitId)}</code>.
        </p>
      )}
    </form>
  );
}
