/**
 * The performance page's targets (bench/targets.ts, bench/report.ts): a target missed is followed
 * by what the profiles show and what it would take, a met one is not; the HA push's target is
 * checked from the replicated and plain pushes of one run, and not checked without etcd; `npm
 * test`'s time is stated when given and said to be unmeasured otherwise.
 */
import { describe, expect, it } from 'vitest';
import { describeMachine } from '../../../bench/machine.js';
import { planFromArgs } from '../../../bench/plan.js';
import { performancePage } from '../../../bench/performancePage.js';
import { performanceFigures } from '../../../bench/report.js';
import type { Measurement, ScenarioResult } from '../../../bench/results.js';
import { HA_PUSH_ONE, PLAIN_PUSH, REPLICATED_PUSH } from '../../../bench/scenarios/haPush.js';
import { LISTING_COLD, LISTING_WARM } from '../../../bench/scenarios/listing.js';
import { summarize } from '../../../bench/stats.js';
import { checkTargets, type TargetCheck } from '../../../bench/targets.js';

function latencies(implementation: string, samples: number[]): Measurement {
  return { implementation, samples, summary: summarize(samples) };
}

function listing(id: string, p50: number): ScenarioResult {
  return { id, title: id, measurements: [latencies('cfghub HTTP', [p50, p50, p50])], notes: [] };
}

function haPush(replicatedMs: number, plainMs: number): ScenarioResult {
  return {
    id: HA_PUSH_ONE,
    title: 'push 1 key, 1 client, HA mode beside a plain server',
    measurements: [
      latencies(PLAIN_PUSH, [plainMs, plainMs, plainMs]),
      latencies(REPLICATED_PUSH, [replicatedMs, replicatedMs, replicatedMs]),
    ],
    notes: [],
  };
}

function find(targets: readonly TargetCheck[], words: string): TargetCheck {
  const found = targets.filter((check) => check.target.includes(words));
  expect(found, words).toHaveLength(1);
  return found[0];
}

async function page(results: ScenarioResult[], args: string[] = []): Promise<string> {
  const plan = planFromArgs(args);
  return performancePage(
    performanceFigures(
      results,
      await describeMachine(),
      plan,
      checkTargets(results, { suiteSeconds: plan.suiteSeconds }),
    ),
  );
}

/** The lines of the page from the target's line to the next target's. */
function targetBlock(text: string, words: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.startsWith('- **') && line.includes(words));
  expect(at, words).toBeGreaterThan(-1);
  const end = lines.findIndex((line, i) => i > at && !line.startsWith('  - '));
  return lines.slice(at, end);
}

describe('performance page targets', () => {
  it('follows a missed target with what the profile shows and what it would take, and a met one with nothing', async () => {
    const text = await page([listing(LISTING_WARM, 15), listing(LISTING_COLD, 900)]);
    const cold = targetBlock(text, 'first request of a new server, p50 under 300 ms');
    expect(cold[0]).toMatch(/^- \*\*not met\*\*: .*p50 900\.00 ms$/);
    expect(cold).toHaveLength(2);
    expect(cold[1]).toMatch(/^ {2}- What the profile shows, and what it would take: .*cfghub-summary\.json/);
    const warm = targetBlock(text, 'warm, p50 under 20 ms');
    expect(warm).toEqual([
      '- **met**: GET /rest/info/all with 1,000 repositories, warm, p50 under 20 ms: p50 15.00 ms',
    ]);
  });

  it('gives every target that can be missed its explanation', () => {
    for (const check of checkTargets([])) expect(check.whenNotMet, check.target).toMatch(/\S.{40,}/);
  });

  it("checks the replicated push's p50 against the plain push's of the same run, at most 1.5x", () => {
    const target = 'synchronously replicated to 2 members (HA leader), 1 client';
    const within = find(checkTargets([haPush(15, 10)]), target);
    expect(within.met).toBe(true);
    expect(within.measured).toContain('1.5x the plain push');
    const beyond = find(checkTargets([haPush(40, 10)]), target);
    expect(beyond.met).toBe(false);
    expect(beyond.measured).toMatch(/^4\.0x the plain push's p50 \(p50 40\.00 ms vs 10\.00 ms/);
  });

  it('says why the replicated push is not checked when etcd is missing', () => {
    const skipped: ScenarioResult = {
      id: HA_PUSH_ONE,
      title: 'push 1 key, 1 client, HA mode beside a plain server',
      measurements: [],
      notes: ['etcd not installed (bench/install-tools.sh installs it): no HA cluster, no rows'],
    };
    const check = find(checkTargets([skipped]), 'synchronously replicated to 2 members (HA leader), 1 client');
    expect(check.met).toBeUndefined();
    expect(check.measured).toContain('etcd not installed');
  });

  it("states npm test's time when given, with its verdict, and says it was not measured otherwise", async () => {
    expect(targetBlock(await page([]), '`npm test` under 8 minutes')).toEqual([
      '- **not checked**: `npm test` under 8 minutes on this machine: not measured in this run',
    ]);
    const slow = targetBlock(await page([], ['--suite-seconds', '840']), '`npm test` under 8 minutes');
    expect(slow[0]).toBe(
      "- **not met**: `npm test` under 8 minutes on this machine: npm test: 840 s on this machine (target 8 minutes), from the suite's own run",
    );
    expect(slow[1]).toContain('docs/testing.md');
    const fast = targetBlock(await page([], ['--suite-seconds=470']), '`npm test` under 8 minutes');
    expect(fast).toHaveLength(1);
    expect(fast[0]).toMatch(/^- \*\*met\*\*: .*470 s on this machine/);
  });

  it('refuses a --suite-seconds that is not a positive number', () => {
    for (const bad of [
      ['--suite-seconds'],
      ['--suite-seconds', 'soon'],
      ['--suite-seconds=0'],
      ['--suite-seconds', '-5'],
    ])
      expect(() => planFromArgs(bad), bad.join(' ')).toThrow(/--suite-seconds takes/);
  });

  it('runs the HA pushes in a full run and alone with --only ha', () => {
    expect(planFromArgs([]).only.has('ha')).toBe(true);
    const alone = planFromArgs(['--quick', '--only', 'ha']);
    expect([...alone.only]).toEqual(['ha']);
    expect(alone.partial).toBe(true);
  });
});
