/** What the routes can reach: services, never the store or Temporal directly. */
import type { Config } from '../config/index.js';
import type { Logger } from '../core/logger.js';
import type { AuthService, Principal } from '../services/auth.js';
import type { CollectionService } from '../services/collections.js';
import type { DeviceMemoryService } from '../services/device-memory.js';
import type { HealthService } from '../services/health.js';
import type { MemoryService } from '../services/memories.js';
import type { SearchService } from '../services/search.js';
import type { TicketService } from '../services/tickets.js';
import type { UploadService } from '../services/uploads.js';
import type { WebhookService } from '../services/webhooks.js';
import type { ProcedureService } from '../services/procedures.js';
import type { AuthFailures } from '../core/auth-failures.js';
import type { WorkerPool } from '../core/worker-pool.js';
import type { JsonTasks } from '../models/json-tasks.js';
import type { ParsedBodyText } from './middleware/pooled-json-body.js';

export interface ApiServices {
  auth: AuthService;
  collections: CollectionService;
  memories: MemoryService;
  deviceMemory: DeviceMemoryService;
  search: SearchService;
  health: HealthService;
  uploads: UploadService;
  tickets: TicketService;
  procedures: ProcedureService;
  webhooks: WebhookService;
  /** The public keys that verify event signatures (a JWKS), retired ones included. */
  signingKeys: () => Promise<{ keys: readonly object[] }>;
}

export interface ApiDeps {
  config: Config;
  logger: Logger;
  services: ApiServices;
  /**
   * Failed credential checks per client address, shared with the WebSocket upgrade (the
   * composition root passes one instance to both); made from the config when absent.
   */
  authFailures?: AuthFailures;
  /** The threads large request bodies are parsed on (api/middleware/pooled-json-body.ts, runtime/roles.ts). */
  bodyPool?: WorkerPool<JsonTasks> | null;
}

export interface AppState {
  principal: Principal;
  requestId: string;
  /** Set by routes that start or touch an ingestion workflow; the access log carries it. */
  workflowId?: string | null;
  /**
   * Aborted when the request is abandoned: its deadline answered 503 (api/middleware/deadline.ts)
   * or its client closed the connection first. Long work (device calls) stops at its next step.
   */
  signal: AbortSignal;
  /** Aborts `signal`; the deadline middleware calls it before it answers. */
  abandon: (reason: Error) => void;
  /** Set when the body was parsed on a worker thread (api/middleware/pooled-json-body.ts). */
  parsedBody?: ParsedBodyText;
  /** Validated inputs, set by the validate middleware. */
  input: { body?: unknown; query?: unknown; params?: unknown };
}
