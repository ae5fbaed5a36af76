/**
 * Webhooks over the admin API: a repository's hooks (added with a secret that is never shown
 * again), the delivery log this server keeps, and redelivery. The service (service/webhooks/) runs
 * one per server, started with it; the routes are a table like the admin API's, and the OpenAPI
 * description is generated from it.
 */
import type { RequestHandler } from 'express';
import type { z } from 'zod';
import { deliveryRecord, newWebhookBody, webhookInfo } from '../../api/admin.js';
import type { WebhookService } from '../../service/webhooks/webhookService.js';
import type { HttpDeps } from '../deps.js';
import type { AdminTokenService } from '../../service/admin/adminTokens.js';
import { adminHandlers, fullName, REPO, type AdminRouteOf } from './adminRoutes.js';

const HOOKS = `${REPO}/webhooks`;

export const WEBHOOK_ROUTES: readonly AdminRouteOf<WebhookService>[] = [
  {
    method: 'get',
    path: HOOKS,
    summary: "the repository's webhooks, never their secrets (cfghub webhook list)",
    status: 200,
    answer: webhookInfo.array(),
    errors: [404],
    run: async (hooks, p) => hooks.list(fullName(p)),
  },
  {
    method: 'post',
    path: HOOKS,
    summary: 'add a webhook: a URL receiving a signed POST after each commit (cfghub webhook add)',
    body: newWebhookBody,
    status: 201,
    answer: webhookInfo,
    errors: [404, 409, 415],
    run: (hooks, p, b: z.infer<typeof newWebhookBody>) => hooks.add(fullName(p), b.url, b.secret),
  },
  {
    method: 'delete',
    path: `${HOOKS}/:hook`,
    summary: 'remove a webhook (cfghub webhook remove)',
    status: 200,
    answer: webhookInfo,
    errors: [404],
    run: (hooks, p) => hooks.remove(fullName(p), p.hook),
  },
  {
    method: 'get',
    path: `${HOOKS}/deliveries`,
    summary:
      "this server's delivery log of the repository's webhooks, newest first: status, attempts, last error (cfghub webhook deliveries)",
    status: 200,
    answer: deliveryRecord.array(),
    errors: [404],
    run: async (hooks, p) => hooks.deliveries(fullName(p)),
  },
  {
    method: 'post',
    path: `${HOOKS}/deliveries/:delivery/redeliver`,
    summary: "deliver a logged delivery's commit again to its webhook, as a new delivery (cfghub webhook redeliver)",
    status: 201,
    answer: deliveryRecord,
    errors: [404],
    run: (hooks, p) => hooks.redeliver(fullName(p), p.delivery),
  },
];

export function webhookRoutes(
  deps: HttpDeps,
  adminTokens: AdminTokenService,
): (route: AdminRouteOf<WebhookService>) => RequestHandler {
  return adminHandlers(deps, () => deps.parts.webhooks, adminTokens);
}
