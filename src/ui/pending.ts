/**
 * The changes a user collects before pushing them as one transaction (one commit), and the push
 * body they make: one element per change, in the order they were made, so a refusal's
 * `data[N]` names the change it is about.
 */
import type { PushBodyInput, PushFileInput, PushKeyInput } from '../api/pushBody.js';

export type PendingChange =
  | { kind: 'value'; key: string; context: string; value: string; active: boolean }
  | { kind: 'delete-value'; key: string; context: string }
  | { kind: 'new-key'; key: string; vdt: string; readme: string; context: string; value: string }
  | { kind: 'delete-key'; key: string }
  | { kind: 'file'; path: string; context: string; content: string; active: boolean }
  | { kind: 'delete-file'; path: string; context: string };

export function describe(change: PendingChange): string {
  switch (change.kind) {
    case 'value':
      return `${change.active ? 'set' : 'deactivate'} ${change.key} for ${change.context} to ${JSON.stringify(change.value)}`;
    case 'delete-value':
      return `delete the value of ${change.key} for ${change.context}`;
    case 'new-key':
      return `create key ${change.key} (${change.vdt}) with ${JSON.stringify(change.value)} for ${change.context}`;
    case 'delete-key':
      return `delete key ${change.key} and all its values`;
    case 'file':
      return `${change.active ? 'write' : 'write (inactive)'} file ${change.path} for ${change.context}`;
    case 'delete-file':
      return `delete file ${change.path} for ${change.context}`;
  }
}

function element(change: PendingChange): PushKeyInput | PushFileInput {
  switch (change.kind) {
    case 'value':
      return { key: change.key, values: [{ context: change.context, value: change.value, active: change.active }] };
    case 'delete-value':
      return { key: change.key, values: [{ context: change.context, opp: 'delete' }] };
    case 'new-key':
      return {
        key: change.key,
        vdt: change.vdt,
        readme: change.readme,
        values: [{ context: change.context, value: change.value }],
      };
    case 'delete-key':
      return { key: change.key, opp: 'delete' };
    case 'file':
      return { file: change.path, context: change.context, content: change.content, active: change.active };
    case 'delete-file':
      return { file: change.path, context: change.context, opp: 'delete' };
  }
}

export function pushBody(changes: readonly PendingChange[], comment: string): PushBodyInput {
  return {
    changeComment: comment,
    enableKeyCreation: changes.some((c) => c.kind === 'new-key'),
    data: changes.map(element),
  };
}

/** The change a refusal names (`data[2] …` or `data[2].values[0] …`), if it names one. */
export function refusedIndex(reason: string): number | undefined {
  const match = /^data\[(\d{1,6})\]/.exec(reason);
  return match ? Number(match[1]) : undefined;
}
