/**
 * The shell examples of the README and of every docs page, as test/e2e/project/readme.test.ts runs them.
 * The convention, also stated for contributors in CONTRIBUTING.md:
 *
 * - A fenced block tagged `sh` is run, README.md first, then each Markdown page under `docs/` in
 *   alphabetical order of its path, in one bash session (variables carry over from block to block
 *   and from page to page; each page starts in the clone's folder), with `set -e`: a failing
 *   command fails it.
 * - `sh norun` is shown as shell but not run (commands the test itself stands for, such as
 *   `npm test`). Any other tag (`text`, `yaml`, `json`, `ini`, none) is illustrative: not run.
 * - A comment line `#> TEXT` states output: some line of what the commands above it (since the
 *   block's start or the previous `#>` group) wrote, stdout and stderr together, holds TEXT.
 *   `…` in TEXT stands for anything within that line (`#> ETag: "…"`). The group of `#>` lines
 *   ends a step; each step's exit status and outputs are checked on their own.
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The page every run starts with: its walkthrough starts the server and makes acme/app. */
export const FRONT_PAGE = 'README.md';

export interface ReadmeStep {
  /** The page, as a path from the repository's top (`README.md`, `docs/cli.md`). */
  readonly page: string;
  /** Line of the page where the step's first command is (1-based). */
  readonly line: number;
  /** The `##`/`###` heading the block is under. */
  readonly section: string;
  readonly code: string;
  /** What the step's output must show, one entry per `#>` line. */
  readonly expects: readonly string[];
}

export interface ReadmeBlock {
  readonly page: string;
  readonly line: number;
  readonly section: string;
  /** The fence's info string: `sh`, `sh norun`, `yaml`, … */
  readonly info: string;
  readonly code: string;
}

const FENCE = '```';
const EXPECT = '#>';

/** Every fenced block of a Markdown text, with its heading and line. */
export function fencedBlocks(markdown: string, page = FRONT_PAGE): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = markdown.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('#')) {
      const heading = /^#{1,6} (.*)$/.exec(line);
      if (heading) section = heading[1].trim();
      continue;
    }
    if (!line.startsWith(FENCE)) continue;
    const info = line.slice(FENCE.length).trim();
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith(FENCE)) end++;
    blocks.push({ page, line: start + 1, section, info, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Whether a block is run: tagged `sh`, without `norun`. */
export function isRun(block: ReadmeBlock): boolean {
  const [language, ...attributes] = block.info.split(/\s+/);
  return language === 'sh' && !attributes.includes('norun');
}

/** A block cut into steps at each group of `#>` lines. */
export function stepsOf(block: ReadmeBlock): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  let code: string[] = [];
  let expects: string[] = [];
  let first = block.line;
  const flush = () => {
    if (code.some((text) => text.trim() !== '') || expects.length) {
      steps.push({ page: block.page, line: first, section: block.section, code: code.join('\n'), expects });
    }
    code = [];
    expects = [];
  };
  block.code.split('\n').forEach((text, index) => {
    const trimmed = text.trim();
    if (trimmed.startsWith(EXPECT)) {
      expects.push(trimmed.slice(EXPECT.length).trim());
      return;
    }
    if (expects.length) flush();
    if (code.length === 0) first = block.line + index;
    code.push(text);
  });
  flush();
  return steps;
}

/** Whether some line of `output` holds `expected`, where `…` in it stands for anything in that line. */
export function shows(output: string, expected: string): boolean {
  const parts = expected.split('…');
  return output.split('\n').some((line) => {
    let at = 0;
    for (const part of parts) {
      const found = line.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
    return true;
  });
}

/**
 * The pages whose examples run, in the order they run: README.md, then every Markdown file under
 * `docs/` in alphabetical order of its path (as paths from `root`, with `/`).
 */
export function documentationPages(root: string): string[] {
  const pages: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = `${folder}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith('.md')) pages.push(path);
    }
  };
  walk('docs');
  return [FRONT_PAGE, ...pages.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))];
}

/**
 * Whether a block runs under a filter of words (`CFGHUB_README_SECTIONS`): every block of the
 * front page (it sets up what the other pages use), and a docs page's block when the page's path
 * or the block's heading holds one of the words (without regard to case). No filter: every block.
 */
export function selected(block: ReadmeBlock, words: readonly string[] | undefined): boolean {
  if (!words || words.length === 0 || block.page === FRONT_PAGE) return true;
  const page = block.page.toLowerCase();
  const section = block.section.toLowerCase();
  return words.some((word) => page.includes(word.toLowerCase()) || section.includes(word.toLowerCase()));
}

/** The addresses and port options of the examples' servers, 8080 to 8089. */
const EXAMPLE_PORT = /(127\.0\.0\.1:|localhost:|--port[ =]|\bPORT=)808(\d)\b/g;

/**
 * An example's commands with each of the servers' ports 8080 to 8089 (written `127.0.0.1:808N`,
 * `localhost:808N`, `--port 808N` or `PORT=808N`) replaced by `ports[N]`, a free port of the test.
 */
export function withPorts(code: string, ports: readonly number[]): string {
  return code.replace(EXAMPLE_PORT, (_all, prefix: string, digit: string) => `${prefix}${ports[Number(digit)]}`);
}
