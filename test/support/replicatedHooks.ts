/**
 * Test support for what a server's replication endpoints give away of its webhooks: the sealing
 * key and the sealed secrets as the server holds them on disk, the state answer a given token
 * receives, and the first line of a feed held against that state.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { WebhookStore } from '../../src/disk/records/webhookStore.js';
import { Webhooks } from '../../src/service/webhooks/hooks.js';
import { RepositoryRegistry } from '../../src/disk/registry.js';

/** The webhooks' sealing key (base64) and each hook's sealed secret, as in a folder on disk. */
export function hookSecretsOn(repos: string): { key: string | undefined; sealed: string[] } {
  const folder = join(repos, '.cfghub');
  const keyPath = join(folder, 'webhook-secrets.key');
  const key = existsSync(keyPath) ? readFileSync(keyPath, 'utf8').trim() : undefined;
  const hooksPath = join(folder, 'webhooks.json');
  const hooks = existsSync(hooksPath)
    ? (JSON.parse(readFileSync(hooksPath, 'utf8')) as { webhooks: { secret: string }[] }).webhooks
    : [];
  return { key, sealed: hooks.map((hook) => hook.secret) };
}

/** Every file of a folder's `.cfghub` records, as text (what a replica keeps outside git). */
function recordsText(repos: string): string {
  const folder = join(repos, '.cfghub');
  if (!existsSync(folder)) return '';
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'))
    .join('\n');
}

/** The replication state `token` receives from `url`, as JSON and as the text sent. */
export async function stateAnswer(
  url: string,
  token: string,
): Promise<{ text: string; json: Record<string, unknown> }> {
  const response = await fetch(`${url}/rest/replication/state`, { headers: { 'Client-Token': token } });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

/**
 * Asserts that a state answer carries none of the webhooks a primary holds in `primaryRepos`: no
 * hook, key or mark, and neither the key nor a sealed secret anywhere in its text.
 */
export function expectNoHookSecrets(text: string, primaryRepos: string): void {
  const held = hookSecretsOn(primaryRepos);
  expect(held.key, 'the primary holds a sealing key').toBeDefined();
  expect(held.sealed.length, 'the primary holds a hook').toBeGreaterThan(0);
  const json = JSON.parse(text) as Record<string, unknown>;
  expect(json).not.toHaveProperty('webhooks');
  expect(json).not.toHaveProperty('webhooksDigest');
  expect(text).not.toContain(held.key);
  for (const sealed of held.sealed) expect(text).not.toContain(sealed);
}

/**
 * Asserts that a replica's folder holds nothing that opens a hook secret of its primary's: no
 * sealing key, neither the primary's key nor a sealed secret in its records, and no hook whose
 * secret opens there.
 */
export function expectReplicaCannotOpenHooks(replicaRepos: string, primaryRepos: string, repository: string): void {
  const held = hookSecretsOn(primaryRepos);
  expect(new WebhookStore(replicaRepos).sealingKey(false)).toBeUndefined();
  const records = recordsText(replicaRepos);
  expect(records).not.toContain(held.key);
  for (const sealed of held.sealed) expect(records).not.toContain(sealed);
  const registry = new RepositoryRegistry(replicaRepos);
  try {
    expect(new Webhooks(registry).opened(repository)).toEqual([]);
  } finally {
    registry.close();
  }
}

/**
 * The first line a feed request answers when it says it holds `state` with a webhooks digest of
 * its own: `{"same":true}` when the webhooks are not compared for this token, the state at once
 * when they are.
 */
export async function firstFeedLine(url: string, token: string, state: Record<string, unknown>): Promise<string> {
  const repositories = state.repositories as { account: string; name: string; refs: string }[];
  const controller = new AbortController();
  const response = await fetch(`${url}/rest/replication/feed`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'Client-Token': token, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      refs: Object.fromEntries(repositories.map((r) => [`${r.account}/${r.name}`, r.refs])),
      tokensDigest: state.tokensDigest,
      adminTokensDigest: state.adminTokensDigest,
      webhooksDigest: 'a-digest-of-webhooks-the-server-does-not-hold',
      origin: state.origin,
      holdMs: 20_000,
    }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (!text.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    controller.abort();
  }
  return text.split('\n')[0];
}
