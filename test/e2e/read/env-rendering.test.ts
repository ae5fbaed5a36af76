/**
 * The env rendering, read by everything that reads such a file: a POSIX shell sourcing it
 * (`set -a; . ./app.env` in sh, bash and dash), the `dotenv` npm package, python-dotenv and docker
 * compose's reader (compose-go's grammar, test/support/envReaders.ts). Every value is either read
 * back exactly by all of them, or left out and named on a comment line; no reader ever runs a
 * command from a value. Over arbitrary texts (with the quotes, escapes, command substitutions and
 * control characters that broke it), then through each surface of the real server: `Accept:
 * text/plain`, `?format=env` and `cfghub pull --format env --output`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteEnvValue, toDotenv } from '../../../src/domain/renderings.js';
import { cliOk, pushTo, runCommand, serverForFile, tempDir } from '../../support/harness.js';
import { CANARY, readWithAll, readWithCompose } from '../../support/envReaders.js';

const dir = tempDir('cfghub-env-');
afterAll(() => dir.remove());

/** Each run spawns python and three shells: 25 by default, more with CFGHUB_ENV_RUNS. */
const RUNS = Number(process.env.CFGHUB_ENV_RUNS ?? 25);

/** Pieces that a shell or a dotenv reader could take for syntax. */
const HOSTILE = [
  "'",
  '"',
  '`',
  '$',
  '\\',
  '\\\\',
  '\n',
  '\r',
  '\r\n',
  '\t',
  '#',
  '=',
  ' ',
  '\v',
  '\f',
  '\u0085',
  '\u00a0',
  '\u2028',
  `$(touch ${CANARY})`,
  `\`touch ${CANARY}\``,
  `''; touch ${CANARY}; ''`,
  `"; touch ${CANARY}; "`,
  '${HOME}',
  '$HOME',
  '$$',
  '\\n',
  '\\r',
  "\\'",
  '\\"',
  '\\$',
  'export X=1',
  'é',
  '😀',
  '!',
  '*',
  '~',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 8 })
  .map((parts) => parts.join(''));

/** The names the file's comment lines leave out. */
function leftOut(rendered: string): Set<string> {
  const names = new Set<string>();
  for (const line of rendered.split('\n')) {
    const comment = /^# left out, [^:]*: (.*)$/.exec(line);
    if (comment) for (const name of comment[1].split(', ')) names.add(name);
  }
  return names;
}

/** Each reader reads each value back exactly, or (left out) not at all. */
function expectReadBack(rendered: string, values: Record<string, string>): void {
  const names = Object.keys(values);
  const out = leftOut(rendered);
  const read = readWithAll(dir.path, rendered, names);
  for (const [reader, got] of Object.entries(read)) {
    const expected = Object.fromEntries(names.filter((name) => !out.has(name)).map((name) => [name, values[name]]));
    expect(got, `${reader} reading:\n${rendered}`).toEqual(expected);
  }
}

describe('the env rendering and its readers', () => {
  it(
    'is read back exactly by sh, bash, dash, dotenv, python-dotenv and compose, or names the value it leaves out',
    () => {
      fc.assert(
        fc.property(fc.array(text, { minLength: 1, maxLength: 12 }), (texts) => {
          const values = Object.fromEntries(texts.map((value, i) => [`V_${i}`, value]));
          const rendered = toDotenv(Object.entries(values).map(([name, value]) => ({ name, value })));
          for (const [name, value] of Object.entries(values)) {
            // Left out only when no writing is safe: a CR, a NUL, or quotes and backslashes in the way.
            if (leftOut(rendered).has(name)) expect(quoteEnvValue(value), JSON.stringify(value)).toBeUndefined();
          }
          expectReadBack(rendered, values);
        }),
        { numRuns: RUNS },
      );
    },
    RUNS * 6000,
  );

  it('writes the values that used to run commands or misread so that none runs, and names what it cannot write', () => {
    const values = {
      SINGLE: `''; touch ${CANARY}; ''`,
      SUBSTITUTION: `"$(touch ${CANARY})"`,
      BACKTICK: `\`touch ${CANARY}\``,
      ALL_QUOTES: `it's "quoted" \`x\``,
      TAB: 'tab\there',
      CARRIAGE: 'tab\there carriage\rreturn',
      LINES: 'line one\nline two\n',
      DOLLAR: '${HOME} $HOME',
      BARE_DOLLAR: '$HOME $(id)',
      WINDOWS: 'C:\\Program Files\\app',
      APOSTROPHE: "it's",
    };
    const rendered = toDotenv(Object.entries(values).map(([name, value]) => ({ name, value })));
    expect([...leftOut(rendered)].sort()).toEqual(['ALL_QUOTES', 'CARRIAGE', 'DOLLAR']);
    expect(rendered).toContain(`SINGLE="''; touch ${CANARY}; ''"\n`);
    expect(rendered).toContain('SUBSTITUTION=\'"$(touch PWNED)"\'\n');
    expect(rendered).toContain('APOSTROPHE="it\'s"\n');
    expectReadBack(rendered, values);
  });

  it('reads compose-go fixtures as compose does (the grammar this test stands in for)', () => {
    expect(readWithCompose('A=\'x $Y \\n\'\nexport B="a\\nb $A"\n# c\nC=plain # comment\n')).toEqual({
      A: 'x $Y \\n',
      B: 'a\nb x $Y \\n',
      C: 'plain',
    });
  });
});

describe('each surface of the server renders the same safe file', () => {
  const fixture = serverForFile();
  const REPO = 'acme/envfile';
  const VALUES: Record<string, string> = {
    SINGLE: `''; touch ${CANARY}; ''`,
    SUBSTITUTION: `"$(touch ${CANARY})"`,
    CARRIAGE: 'tab\there carriage\rreturn',
    TAB: 'tab\there',
    APOSTROPHE: "it's",
    PLAIN: 'localhost',
  };

  beforeAll(async () => {
    cliOk(fixture.repos, 'repo', 'create', REPO, '--context', 'Env', '--token-free-pull', '--token-free-push');
    const data = [...Object.entries(VALUES), ['db.url', 'jdbc:x']].map(([key, value]) => ({
      key,
      values: [{ context: '*', value }],
    }));
    const pushed = await pushTo(fixture.server.url, `/rest/push/${REPO}`, { enableKeyCreation: true, data });
    expect(pushed.status, pushed.body).toBe(200);
  });

  it('Accept: text/plain, ?format=env and cfghub pull --format env --output write one file that all readers read back', async () => {
    const url = `${fixture.server.url}/rest/pull/${REPO}`;
    const byAccept = await (await fetch(url, { headers: { Context: 'Prod', Accept: 'text/plain' } })).text();
    const byQuery = await (await fetch(`${url}?format=env`, { headers: { Context: 'Prod' } })).text();
    const output = join(dir.path, 'pulled.env');
    const pulled = await runCommand(['pull', REPO, '--context', 'Prod', '--format', 'env', '--output', output], {
      env: { ...process.env, CFGHUB_SERVER: fixture.server.url },
    });
    expect(pulled.code, pulled.stderr).toBe(0);
    const byCli = readFileSync(output, 'utf8');
    expect(byQuery).toBe(byAccept);
    expect(byCli).toBe(byAccept);
    expect(byAccept.split('\n').slice(0, 2)).toEqual([
      '# left out, not environment variable names: db.url',
      '# left out, values a shell and the dotenv readers cannot all read back as they are: CARRIAGE',
    ]);
    expectReadBack(byAccept, VALUES);
  });
});
