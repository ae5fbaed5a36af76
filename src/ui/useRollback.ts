/**
 * A rollback (revert a commit, restore a tag) with a Preview step, as every console write has: the
 * same revert or restore as a dry run first (what it would commit or why it would be refused,
 * context by context), then, once the user confirms, the rollback itself on the head the preview
 * was made on (If-Match), so what is committed is what was shown. Nothing is written before the
 * confirmation, nor when the user goes back.
 */
import { useState } from 'preact/hooks';
import { previewRollback, rollback, type RepoRef, type Rollback } from './api';
import { onPreviewedHead, usePreviewStep } from './DryRunPreview';

export function useRollback(repo: RepoRef, onChanged: () => void) {
  const step = usePreviewStep<Rollback>();
  const [done, setDone] = useState<string>();
  return {
    busy: step.busy,
    error: step.error,
    /** The dry run's answer while the user decides. */
    preview: step.preview,
    /** The commit the confirmed rollback made. */
    done,
    back: step.back,
    /** The Preview step: the rollback as a dry run; nothing is written. */
    show: (change: Rollback) => {
      setDone(undefined);
      return step.show(change, (write) => previewRollback(repo, write));
    },
    /** The previewed rollback, confirmed: made on the previewed head. */
    confirm: () =>
      step.confirm(async (change, answer) => {
        const made = await onPreviewedHead(() => rollback(repo, change, answer.head), `the ${change.kind}`);
        setDone(made.commit);
        onChanged();
      }),
  };
}
