/**
 * Turns results into the one table (plain text for the terminal, markdown for docs/performance.md) and the
 * lines around it: machine, mode, how to read the ratio, durability, and the targets' verdicts.
 */
import { GIT_DURABILITY } from './gitPlumbing.js';
import { machineLine, type Machine } from './machine.js';
import type { Plan } from './plan.js';
import type { Measurement, ScenarioResult } from './results.js';
import type { TargetCheck } from './targets.js';

const HEADER = ['scenario', 'implementation', 'p50 ms', 'p99 ms', 'ops/s', 'ratio vs references'];

function milliseconds(value: number): string {
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

function times(speedup: number): string {
  return `${speedup < 1 ? speedup.toFixed(2) : speedup.toFixed(1)}x`;
}

function ratio(result: ScenarioResult, measurement: Measurement): string {
  if (!result.references?.length) return '-';
  if (result.references.includes(measurement.implementation)) return 'reference';
  return Object.entries(measurement.speedups ?? {})
    .map(([reference, speedup]) => `${times(speedup)} ${reference}`)
    .join(', ');
}

function rate(result: ScenarioResult, measurement: Measurement): string {
  if (result.hideRate) return '-';
  const perSecond = measurement.summary.opsPerSecond;
  return perSecond < 10 ? perSecond.toFixed(1) : perSecond.toFixed(0);
}

/** A memory scenario has one figure and no latencies: its row says so. */
function memoryRow(result: ScenarioResult): string[] {
  return [result.title, 'cfghub serve', '-', '-', '-', `${result.residentMiB} MiB resident`];
}

function rows(results: readonly ScenarioResult[]): string[][] {
  return results.flatMap((result) =>
    result.residentMiB !== undefined
      ? [memoryRow(result)]
      : result.measurements.map((m) => [
          `${result.title} (n=${m.summary.samples})`,
          m.implementation,
          milliseconds(m.summary.p50),
          milliseconds(m.summary.p99),
          rate(result, m),
          ratio(result, m),
        ]),
  );
}

/** Numbers right-aligned, text left-aligned. */
function isNumeric(cell: string): boolean {
  return /^[\d.]+/.test(cell);
}

export function textTable(results: readonly ScenarioResult[]): string {
  const all = [HEADER, ...rows(results)];
  const widths = HEADER.map((_, c) => Math.max(...all.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row
      .map((cell, c) => (c > 1 && isNumeric(cell) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join('  ')
      .trimEnd();
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

export function markdownTable(results: readonly ScenarioResult[]): string {
  const line = (row: string[]) => `| ${row.join(' | ')} |`;
  const align = HEADER.map((_, c) => (c > 1 ? '---:' : '---'));
  return [line(HEADER), line(align), ...rows(results).map(line)].join('\n');
}

const RATIO_LEGEND =
  "Ratio, for each reference named in the cell: for latency rows, per round the reference's time divided by this implementation's time on the same change set, then the median over rounds; for throughput rows (pull, concurrent pushes), per pair of slices this implementation's operations per second divided by the reference's, then the median. Above 1 means faster than the reference. ops/s is operations per second of all clients together; n the number of operations.";

function durabilityLine(): string {
  const git = Object.entries(GIT_DURABILITY)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  return `Durability: cfghub fdatasyncs the push's record (its pack, its index and the ref's move) in its push journal before answering, and fsyncs the files themselves later (in-process and over HTTP alike, as \`cfghub serve\` does); git plumbing runs with ${git} set in the reference repository's config; etcd runs with its defaults (its write-ahead log fsynced before a transaction is answered). git plumbing: one git child process per command (hash-object, update-index on a kept index, write-tree, commit-tree, update-ref), spawned from a separate lean Node process and timed there. etcd: one member on loopback, temporary data folder, reached through its HTTP gateway (JSON, base64 keys and values).`;
}

function planLine(plan: Plan): string {
  const pushes = plan.pushes
    .map((p) => `${p.rounds} rounds of ${p.keysPerPush}-key pushes after ${p.warmup} warm-up`)
    .join(', ');
  const pull = `pull: ${plan.pull.slices} slices of ${plan.pull.sliceSeconds} s per endpoint with ${plan.pull.connections.join(' and ')} connections`;
  const concurrent = `${plan.concurrent.clients} concurrent clients: ${plan.concurrent.slices} slices of ${plan.concurrent.sliceSeconds} s per implementation`;
  const ha = `HA: ${plan.ha.rounds} rounds of ${plan.ha.sequential} pushes of 1 client and ${plan.ha.concurrentSeconds} s of ${plan.ha.clients} clients per implementation`;
  const scenarios = plan.partial ? `; scenarios: ${[...plan.only].join(', ')}` : '';
  return `Run: ${plan.mode} (${pushes}, interleaved one push per implementation per round in rotating order; ${concurrent}; ${ha}; ${plan.listing.warm} warm, ${plan.listing.afterPush} after-push and ${plan.listing.cold} cold listings; ${pull}; ${plan.restart.repetitions} restarts; ${plan.memory.repositories} repositories for memory; ${plan.clone.rounds} rounds of clones; watch: ${plan.watch.watchers.toLocaleString('en-US')} watchers, ${plan.watch.oneRounds} one-context and ${plan.watch.allRounds} every-context pushes${scenarios}).`;
}

const TARGETS_HEADING = 'Targets:';

function verdict(check: TargetCheck): string {
  return check.met === undefined ? 'not checked' : check.met ? 'met' : 'NOT met';
}

function targetLine(check: TargetCheck): string {
  return `${verdict(check)}: ${check.target} (measured ${check.measured})`;
}

/** What the profiles say and what it would take, for a target this run did not meet. */
function notMetLines(check: TargetCheck): string[] {
  return check.met === false && check.whenNotMet ? [check.whenNotMet] : [];
}

/** The workers' throughput rows have no target: what they can show needs more cores than the bench's machine. */
const WORKERS_LEGEND =
  'The `--workers auto` rows of the pull and of 16 clients pushing are information, not targets: on a 2-core machine whose load generator takes a core, a server of two workers cannot be held to a bare node:http process that has a core to itself (see [workers](operations/workers.md)).';

function notes(results: readonly ScenarioResult[]): string[] {
  return results.flatMap((result) => result.notes.map((note) => `${result.title}: ${note}`));
}

export function terminalReport(
  results: readonly ScenarioResult[],
  machine: Machine,
  plan: Plan,
  targets: readonly TargetCheck[],
): string {
  return [
    `cfghub bench, ${machine.date}, ${machineLine(machine)}`,
    planLine(plan),
    '',
    textTable(results),
    '',
    RATIO_LEGEND,
    durabilityLine(),
    ...notes(results),
    '',
    TARGETS_HEADING,
    ...targets.flatMap((check) => [`  ${targetLine(check)}`, ...notMetLines(check).map((line) => `      ${line}`)]),
    '',
  ].join('\n');
}

/** The figures of docs/performance.md: environment, method, table, targets and notes. */
export function performanceFigures(
  results: readonly ScenarioResult[],
  machine: Machine,
  plan: Plan,
  targets: readonly TargetCheck[],
): string {
  return [
    `Measured by \`npm run bench${plan.mode === 'quick' ? ' -- --quick' : ''}\` on ${machine.date}.`,
    '',
    `- Machine: ${machineLine(machine)}.`,
    `- ${planLine(plan)}`,
    `- ${durabilityLine()}`,
    `- ${RATIO_LEGEND}`,
    '',
    markdownTable(results),
    '',
    TARGETS_HEADING,
    '',
    ...targets.flatMap((check) => [
      `- **${verdict(check).toLowerCase()}**: ${check.target}: ${check.measured}`,
      ...notMetLines(check).map((line) => `  - What the profile shows, and what it would take: ${line}`),
    ]),
    '',
    WORKERS_LEGEND,
    '',
    'Notes:',
    '',
    ...notes(results).map((note) => `- ${note}`),
  ].join('\n');
}
