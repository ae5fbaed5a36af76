/**
 * The webhooks of each repository: a URL receiving a signed POST after each commit. Each hook's
 * secret is sealed at rest (sealing.ts, AES-256-GCM with the hook's repository and id as
 * authenticated data, so a sealed secret moved to another hook does not open) and is never shown
 * again, nor logged: a listing names the URL and id only.
 */
import { createHash, randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/dates.js';
import type { RepositoryRegistry } from '../../disk/registry.js';
import { WebhookStore, type WebhookRecord } from '../../disk/records/webhookStore.js';
import { requireRepository } from '../admin/repositories.js';
import { isHttp, urlOf } from '../../lib/urls.js';
import { ServiceError } from '../errors.js';
import { open, seal } from '../security/sealing.js';

/** Hooks per repository at most, and the longest URL and secret. */
export const MAX_HOOKS_PER_REPOSITORY = 20;
const MAX_URL = 2_000;
export const MIN_SECRET = 16;
export const MAX_SECRET = 256;

/** A hook as the admin API shows it: never its secret. */
export interface WebhookInfo {
  readonly id: string;
  readonly repository: string;
  readonly url: string;
  readonly created: string;
}

/** A hook with its secret opened, for delivering. */
export interface OpenedHook extends WebhookInfo {
  readonly secret: string;
}

const infoOf = (hook: WebhookRecord): WebhookInfo => ({
  id: hook.id,
  repository: hook.repository,
  url: hook.url,
  created: hook.created,
});

const identityOf = (repository: string, id: string) => `webhook:${repository}:${id}`;
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** A URL a hook may POST to: http or https, no credentials in it (they would be shown in listings). */
export function checkHookUrl(text: string): string {
  const url = urlOf(text);
  if (!url)
    throw new ServiceError('invalid_argument', `the webhook URL is not a URL: ${JSON.stringify(text.slice(0, 100))}`);
  if (!isHttp(url)) throw new ServiceError('invalid_argument', 'the webhook URL must be http or https');
  if (url.username || url.password)
    throw new ServiceError('invalid_argument', 'the webhook URL must not hold credentials: the secret signs the body');
  if (text.length > MAX_URL) throw new ServiceError('invalid_argument', `the webhook URL is longer than ${MAX_URL}`);
  return url.href;
}

export function checkSecret(secret: string): void {
  if (secret.length < MIN_SECRET || secret.length > MAX_SECRET || /[\u0000-\u001f\u007f]/.test(secret))
    throw new ServiceError(
      'invalid_argument',
      `a webhook secret is ${MIN_SECRET} to ${MAX_SECRET} printable characters`,
    );
}

export class Webhooks {
  private readonly store: WebhookStore;

  constructor(private readonly registry: RepositoryRegistry) {
    this.store = new WebhookStore(registry.root);
  }

  list(fullName: string): WebhookInfo[] {
    const repository = this.repositoryOf(fullName);
    return this.store
      .all()
      .filter((hook) => hook.repository === repository)
      .map(infoOf);
  }

  async add(fullName: string, url: string, secret: string): Promise<WebhookInfo> {
    const repository = this.repositoryOf(fullName);
    const href = checkHookUrl(url);
    checkSecret(secret);
    const key = this.store.sealingKey(true)!;
    const id = randomUUID();
    const hook: WebhookRecord = {
      id,
      repository,
      url: href,
      secret: seal(key, keyIdOf(key), secret, identityOf(repository, id)),
      created: isoSeconds(new Date()),
    };
    return this.store.update((hooks) => {
      if (hooks.filter((h) => h.repository === repository).length >= MAX_HOOKS_PER_REPOSITORY)
        throw new ServiceError('conflict', `${repository} has ${MAX_HOOKS_PER_REPOSITORY} webhooks already`);
      return { hooks: [...hooks, hook], result: infoOf(hook) };
    });
  }

  async remove(fullName: string, id: string): Promise<WebhookInfo> {
    const repository = this.repositoryOf(fullName);
    return this.store.update((hooks) => {
      const hook = hooks.find((h) => h.repository === repository && h.id === id);
      if (!hook) throw new ServiceError('not_found', `${repository} has no webhook ${JSON.stringify(id.slice(0, 64))}`);
      return { hooks: hooks.filter((h) => h !== hook), result: infoOf(hook) };
    });
  }

  /** The repositories that have hooks (`account/name`). */
  repositories(): string[] {
    return [...new Set(this.store.all().map((hook) => hook.repository))];
  }

  /** The hooks of a repository with their secrets opened; one whose secret does not open is left out. */
  opened(repository: string, onUnopened: (hook: WebhookInfo) => void = () => {}): OpenedHook[] {
    const hooks = this.store.all().filter((hook) => hook.repository === repository);
    if (hooks.length === 0) return [];
    const key = this.store.sealingKey(false);
    const out: OpenedHook[] = [];
    for (const hook of hooks) {
      const secret = key && open(key, keyIdOf(key), hook.secret, identityOf(hook.repository, hook.id));
      if (secret === undefined) onUnopened(infoOf(hook));
      else out.push({ ...infoOf(hook), secret });
    }
    return out;
  }

  private repositoryOf(fullName: string): string {
    const [account, name] = fullName.split('/');
    return requireRepository(this.registry, account ?? '', name ?? '').fullName;
  }
}
