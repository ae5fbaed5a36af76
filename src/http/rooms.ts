/**
 * The rooms of routes a front serves from: each made once per front (app.ts), with what it holds
 * for its life; the route table's entries take their handlers from them (routeTable.ts). A room
 * that holds something past a request (the read endpoints' held watches) is closed explicitly
 * by the front, through `close` here.
 */
import type { Request, Response } from 'express';
import { AdminTokenStore } from '../disk/records/adminTokenStore.js';
import { AdminTokenService } from '../service/admin/adminTokens.js';
import type { HttpDeps } from './deps.js';
import { sendJson } from './answer/headers.js';
import { openApiDocument } from './openapi.js';
import { adminRoutes } from './routes/adminRoutes.js';
import { changeRoutes } from './routes/changeRoutes.js';
import { clientsRoutes } from './routes/clients.js';
import { explainRoutes } from './routes/explainRoutes.js';
import { gitRoutes } from './routes/gitRoutes.js';
import { haRoutes } from './routes/haRoutes.js';
import { historyRoutes } from './routes/historyRoutes.js';
import { infoRoutes } from './routes/infoRoutes.js';
import { ofrepRoutes } from './routes/ofrep.js';
import { pushFront } from './routes/pushFront.js';
import { pushRoutes } from './routes/pushRoutes.js';
import { readRoutes } from './routes/readRoutes.js';
import { replicationRoutes } from './routes/replicationRoutes.js';
import { rollbackRoutes } from './routes/rollbackRoutes.js';
import { springRoutes } from './routes/spring.js';
import { uiRoutes } from './routes/uiRoutes.js';
import { webhookRoutes } from './routes/webhookRoutes.js';

/** Every room of a front, and the one call that ends what they hold. */
export function openRooms(deps: HttpDeps) {
  const adminTokens = new AdminTokenService(new AdminTokenStore(deps.registry.root));
  const reads = readRoutes(deps);
  const rooms = {
    deps,
    openApi: (req: Request, res: Response) => sendJson(req, res, 200, openApiDocument()),
    reads,
    // Pushes on node:http; one with a compressed body through express, whose body parser inflates it.
    push: { plain: pushFront(deps), express: pushRoutes(deps) },
    spring: springRoutes(deps),
    ofrep: ofrepRoutes(deps),
    git: gitRoutes(deps),
    info: infoRoutes(deps),
    replication: replicationRoutes(deps),
    ha: haRoutes(deps),
    history: historyRoutes(deps),
    rollback: rollbackRoutes(deps),
    changes: changeRoutes(deps, adminTokens),
    ui: uiRoutes(deps),
    explain: explainRoutes(deps),
    admin: adminRoutes(deps, adminTokens),
    clients: clientsRoutes(deps, adminTokens),
    webhooks: webhookRoutes(deps, adminTokens),
  };
  return {
    rooms,
    /** Ends what the rooms hold past a request: held watches are answered 304. */
    close(): void {
      reads.close();
    },
  };
}

export type Rooms = ReturnType<typeof openRooms>['rooms'];
