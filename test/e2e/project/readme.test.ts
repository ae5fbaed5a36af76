/**
 * Every shell example of the README and of the docs pages, run as a reader pasting them would run
 * them, so the documentation cannot drift from what cfghub does.
 *
 * Convention (see test/support/readmeBlocks.ts, and "Examples are tested" in CONTRIBUTING.md):
 * fenced blocks tagged `sh` run in one bash session with `set -e`, README.md first, then each
 * Markdown page under `docs/` in alphabetical order of its path, each page starting with a `cd`
 * back to the clone's folder; `sh norun` and every other tag (`text`, `yaml`, `json`, `ini`) are
 * illustrative and not run; a comment line `#> TEXT` states that the output of the commands above
 * it holds TEXT (`…` stands for anything within a line), and ends a step whose exit status and
 * outputs are checked on their own.
 *
 * The session starts in a fresh "clone" in a temporary folder: `dist/` (the command in
 * `dist/bin/`) and `node_modules/` of this checkout linked in (`npm test` has just built it), `npm ci` replaced by a stand-in that
 * says so (installing again would take minutes and the network), `HOME` a temporary folder (so
 * nothing touches the user's npm cache or git configuration), no `CFGHUB_REPOS`, and ten free
 * ports in place of 8080 to 8089 (`PORT` is 8080's; `127.0.0.1:808N`, `localhost:808N`,
 * `--port 808N` and `PORT=808N` are rewritten in the commands), so the walkthrough's own
 * `cfghub serve` is a fresh server. Everything started in the background is stopped at the end.
 *
 * `CFGHUB_README_SECTIONS=security,git` runs the README's blocks (which start the server and make
 * acme/app) and the docs blocks whose page path or heading holds one of the comma-separated words.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/harness.js';
import {
  documentationPages,
  FRONT_PAGE,
  fencedBlocks,
  isRun,
  selected,
  shows,
  stepsOf,
  withPorts,
  type ReadmeStep,
} from '../../support/readmeBlocks.js';
import { reservedPorts } from '../../support/ports.js';

const ROOT = resolve(__dirname, '../../..');
/** The whole session's time limit; a step that waits forever ends here. */
const SESSION_MS = 420_000;
/** Ports 8080 to 8089 of the examples. */
const EXAMPLE_PORTS = 10;

function selectedSteps(): ReadmeStep[] {
  const only = process.env.CFGHUB_README_SECTIONS?.split(',')
    .map((word) => word.trim())
    .filter(Boolean);
  return documentationPages(ROOT)
    .flatMap((page) => fencedBlocks(readFileSync(join(ROOT, page), 'utf8'), page))
    .filter(isRun)
    .filter((block) => selected(block, only))
    .flatMap(stepsOf);
}

interface StepResult {
  readonly status: number | undefined;
  readonly output: string;
}

const steps = selectedSteps();
const results: StepResult[] = [];
let sessionProblem = '';
let serverStopped = false;
const dir = tempDir('cfghub-readme-');

beforeAll(async () => {
  const ports = await reservedPorts(EXAMPLE_PORTS);
  const port = ports[0];
  const clone = join(dir.path, 'cfghub');
  const home = join(dir.path, 'home');
  const work = join(dir.path, 'session');
  for (const folder of [clone, home, work]) mkdirSync(folder, { recursive: true });
  // curl's progress meter, which it shows only when its output is not a terminal, is noise here.
  writeFileSync(join(home, '.curlrc'), 'silent\nshow-error\n');
  for (const entry of ['dist', 'node_modules', 'package.json', 'package-lock.json']) {
    symlinkSync(join(ROOT, entry), join(clone, entry));
  }
  const lines = [
    'set -e',
    // Whatever the walkthrough started in the background stops with the session.
    "trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null' EXIT",
    // The stand-in for the install, which `npm test` has done for this checkout.
    'npm() { if [ "$1" = ci ]; then echo "(npm ci: the test stands in for it; this checkout is built)"; else command npm "$@"; fi; }',
    `cd ${JSON.stringify(clone)}`,
  ];
  steps.forEach((step, n) => {
    // Each page starts where a reader opening it would be: in the clone's folder.
    if (n > 0 && steps[n - 1].page !== step.page) lines.push(`cd ${JSON.stringify(clone)}`);
    const file = join(work, `step-${n}.sh`);
    writeFileSync(file, `${withPorts(step.code, ports)}\n`);
    lines.push(
      `{ . ${JSON.stringify(file)}; } > ${JSON.stringify(join(work, `out-${n}`))} 2>&1`,
      `echo $? > ${JSON.stringify(join(work, `status-${n}`))}`,
    );
  });
  writeFileSync(join(work, 'session.sh'), `${lines.join('\n')}\n`);

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    PORT: String(port),
    TMPDIR: dir.path,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Reader',
    GIT_AUTHOR_EMAIL: 'reader@example.com',
    GIT_COMMITTER_NAME: 'Reader',
    GIT_COMMITTER_EMAIL: 'reader@example.com',
  };
  const session = spawn('bash', [join(work, 'session.sh')], {
    env,
    cwd: clone,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  session.stderr.on('data', (chunk) => (stderr += String(chunk)));
  const timer = setTimeout(() => {
    sessionProblem = `the examples did not end within ${SESSION_MS / 1000} s`;
    process.kill(-session.pid!, 'SIGKILL');
  }, SESSION_MS);
  await new Promise<void>((done) => session.on('close', () => done()));
  clearTimeout(timer);
  // The session's trap stopped (and waited for) what the walkthrough started: nothing answers now.
  serverStopped = await fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => false,
    () => true,
  );
  if (stderr.trim()) sessionProblem ||= stderr.trim();
  for (let n = 0; n < steps.length; n++) {
    const read = (name: string) =>
      existsSync(join(work, `${name}-${n}`)) ? readFileSync(join(work, `${name}-${n}`), 'utf8') : undefined;
    const status = read('status');
    const output = read('out');
    // A step with output and no status is the one whose failure stopped the session (set -e).
    results.push({
      status: status === undefined ? (output === undefined ? undefined : -1) : Number(status),
      output: output ?? '',
    });
  }
}, SESSION_MS + 10_000);

afterAll(() => {
  dir.remove();
});

describe('documentation examples (every `sh` block of README.md, then of docs/, in order, in one session)', () => {
  it('has examples to run, and a server that ends with the session', () => {
    expect(steps.length).toBeGreaterThan(10);
    expect(steps[0].page).toBe(FRONT_PAGE);
    expect(serverStopped, 'the server the walkthrough started still answers after the session').toBe(true);
  });

  it.each(steps.map((step, n) => [`${step.page}:${step.line} (${step.section})`, n] as const))('%s', (_name, n) => {
    const step = steps[n];
    const result = results[n];
    const context = `\n--- commands (${step.page}:${step.line}) ---\n${step.code}\n--- output ---\n${result?.output}\n${sessionProblem}`;
    expect(result?.status, `not run: an earlier step failed${context}`).not.toBeUndefined();
    expect(result.status, `a command failed${context}`).toBe(0);
    for (const expected of step.expects) {
      expect(shows(result.output, expected), `the output does not show ${JSON.stringify(expected)}${context}`).toBe(
        true,
      );
    }
  });
});
