/**
 * A parsed key document keeps none of the document's text (ownCopies.ts): its values, contexts,
 * name and readme are strings of their own, not views into the text they were cut from, which
 * snapshots held for as long as they held the key (31 MB of document texts for 100 repositories
 * of 1,000 keys). Both readers: the canonical one and the yaml library's, for a document edited
 * by hand.
 *
 * Measured in a child process with `--expose-gc`, so that a collection before each reading makes
 * the heap's size exact: 1,000 documents of 20 KB each, parsed and kept, their texts dropped.
 * Kept as views, they hold 20 MB; kept as their own strings, a few hundred KB.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LAYOUT = fileURLToPath(new URL('../../../src/layout/layout.ts', import.meta.url));
const DOCUMENTS = 1_000;
const README_CHARS = 20_000;

/** Heap growth, in bytes, of keeping the parsed records of DOCUMENTS documents whose texts are dropped. */
function keptBytes(handEdited: boolean): number {
  const script = `
    import { parseKey, serializeKey } from ${JSON.stringify(LAYOUT)};
    const records = [];
    const text = (i) => {
      const canonical = serializeKey({ key: 'app.key' + i, readme: 'r'.repeat(${README_CHARS}) + i, deprecated: false, vdt: 'Text', push: true,
        values: [{ context: ['Production', 'Billing', 'node-' + i], value: 'a value of some length, number ' + i, active: true }] });
      // The yaml library's reader: the same document with a comment, which the canonical reader refuses.
      return ${handEdited} ? '# edited by hand\\n' + canonical : canonical;
    };
    globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < ${DOCUMENTS}; i++) {
      const record = parseKey(text(i), 'keys/x.yaml');
      // Keep what a snapshot resolves with, not the readme (which is the document's bulk here).
      records.push({ key: record.key, values: record.values });
    }
    globalThis.gc();
    console.log(process.memoryUsage().heapUsed - before, records.length);
  `;
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const [bytes, count] = out.trim().split(' ').map(Number);
  expect(count).toBe(DOCUMENTS);
  return bytes;
}

describe('a parsed key document', () => {
  it.each([
    ['the canonical reader', false],
    ['the yaml library, for a document edited by hand', true],
  ])(
    'keeps none of its text, read by %s',
    (_, handEdited) => {
      // Views would keep every 20 KB text: 20 MB. Own strings: the records alone.
      expect(keptBytes(handEdited)).toBeLessThan((DOCUMENTS * README_CHARS) / 10);
    },
    60_000,
  );
});
