/** A small HTTP client for the suites: real requests to the running API, nothing mocked. */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../config/index.js';
import { checkResponse } from './openapi.js';
import type { StackInfo } from './stack-info.js';

export function stack(): StackInfo {
  const file = process.env.STACK_FILE;
  if (!file) throw new Error('STACK_FILE is not set: run the suites through `npm test`');
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary JSON shapes.
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string | null,
  ) {}

  async request(method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (this.apiKey) (init.headers as Record<string, string>).Authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) {
      (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    const response = await fetch(`${this.baseUrl}${urlPath}`, init);
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // leave as text
    }
    // Every response the suites see is also a check of the OpenAPI document against real traffic.
    if (response.headers.get('content-type')?.startsWith('application/json')) {
      const mismatch = checkResponse(method, urlPath, response.status, parsed);
      if (mismatch) throw new Error(mismatch);
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  get = (urlPath: string, headers?: Record<string, string>) => this.request('GET', urlPath, undefined, headers);
  post = (urlPath: string, body?: unknown, headers?: Record<string, string>) => this.request('POST', urlPath, body, headers);
  patch = (urlPath: string, body?: unknown) => this.request('PATCH', urlPath, body);
  delete = (urlPath: string) => this.request('DELETE', urlPath);

  /** A search with the ranking left untouched by this request (no access is recorded). */
  search = (collectionIds: string[], query: string, extra: Record<string, unknown> = {}) =>
    this.post('/v1/memories/search', { query, collection_ids: collectionIds, track_access: false, ...extra });
}

const execFileAsync = promisify(execFile);

export interface TenantFixture {
  api: Api;
  tenantId: string;
  apiKey: string;
  keyId: string;
  collectionId: string;
}

/** A fresh tenant, key and collection, made the way an operator would: with the admin CLI. */
export async function newTenant(label = 'test'): Promise<TenantFixture> {
  const info = stack();
  const name = `${label}-${Math.random().toString(36).slice(2, 10)}`;
  const { stdout } = await execFileAsync(
    process.execPath,
    [path.join(projectRoot(), 'dist', 'bin', 'admin.js'), 'bootstrap', '--tenant', name, '--collection', 'main', '--json'],
    { env: { ...process.env, ...info.serviceEnv, LOG_LEVEL: 'warn' } },
  );
  const created = JSON.parse(stdout) as { tenant_id: string; api_key: string; key_id: string; collection_id: string };
  return {
    api: new Api(info.apiUrl, created.api_key),
    tenantId: created.tenant_id,
    apiKey: created.api_key,
    keyId: created.key_id,
    collectionId: created.collection_id,
  };
}

export async function admin(...args: string[]): Promise<string> {
  return adminWith({}, ...args);
}

/** The admin CLI with extra environment (e.g. another database). */
export async function adminWith(env: Record<string, string>, ...args: string[]): Promise<string> {
  const info = stack();
  const { stdout } = await execFileAsync(process.execPath, [path.join(projectRoot(), 'dist', 'bin', 'admin.js'), ...args], {
    env: { ...process.env, ...info.serviceEnv, LOG_LEVEL: 'warn', ...env },
  });
  return stdout;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Retries a check until it passes or `timeoutMs` runs out, then throws its last failure: for
 * state the service reaches eventually (a pattern mine owed after a burst, a socket closed).
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 30_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
}

/** Waits for a condition to hold; past `timeoutMs`, fails naming `what` it waited for. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => {
      if (!(await condition())) throw new Error(`timed out waiting for ${what}`);
    },
    timeoutMs,
    25,
  );
}

/** Polls a memory until it reaches one of the given statuses. */
export async function waitForStatus(api: Api, memoryId: string, statuses: string[], timeoutMs = 60_000): Promise<ApiResponse> {
  return eventually(
    async () => {
      const last = await api.get(`/v1/memories/${memoryId}`);
      if (last.status === 200 && statuses.includes(last.body.results.status)) return last;
      throw new Error(`memory ${memoryId} did not reach ${statuses.join('/')} in ${timeoutMs} ms; last: ${JSON.stringify(last.body)}`);
    },
    timeoutMs,
    100,
  );
}

export async function createMemory(fixture: TenantFixture, body: Record<string, unknown>): Promise<string> {
  const response = await fixture.api.post('/v1/memories', { collection_id: fixture.collectionId, ...body });
  if (response.status !== 202) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.results.id as string;
}
