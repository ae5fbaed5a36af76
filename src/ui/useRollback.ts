/**
 * A rollback the user confirms first (revert a commit, restore a tag): whether it is being
 * confirmed, whether it runs, the server's error as it is, and the commit it made.
 */
import { useState } from 'preact/hooks';

export function useRollback(run: () => Promise<{ commit?: string }>, onChanged: () => void) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const start = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const outcome = await run();
      setDone(outcome.commit);
      setConfirming(false);
      onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { confirming, setConfirming, busy, error, done, start };
}
