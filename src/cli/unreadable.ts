/**
 * How `cfghub repo list` names the repositories it leaves out of its records because they cannot
 * be read: one stderr line each, with what is wrong and, when known, the file and commit to mend.
 */
import type { UnreadableRecord } from '../service/read/listing.js';

export function unreadableLines(unreadable: readonly UnreadableRecord[]): string[] {
  return unreadable.map((record) => {
    const where = [record.file && `file ${record.file}`, record.commit && `commit ${record.commit}`]
      .filter(Boolean)
      .join(', ');
    return `cfghub: repository ${record.account}/${record.name} is left out of the list: ${record.error}: ${record.message}${where ? ` (${where})` : ''}`;
  });
}
