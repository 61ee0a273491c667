/** Extra service processes beside the stack's own, for suites about several processes or faults. */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../dev/embedded.js';
import { spawnService, waitForReady } from '../../dev/stack.js';
import { stack } from './client.js';

export interface ApiProcess {
  child: ChildProcess;
  baseUrl: string;
}

/** Another API process on the stack's database and Temporal, with `env` on top; logs to `<logName>.log`. */
export async function startApiProcess(logName: string, env: Record<string, string> = {}): Promise<ApiProcess> {
  const info = stack();
  const port = await freePort();
  const child = spawnService(
    'api/main.js',
    { ...info.serviceEnv, ROLE: 'api', PORT: String(port), ...env },
    path.join(info.logDir, `${logName}.log`),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForReady(baseUrl, 120_000, child);
  return { child, baseUrl };
}
