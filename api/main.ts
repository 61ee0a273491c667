/** API process (ROLE=api, or ROLE=all to also run a worker in-process). */
import { loadConfig } from '../config/index.js';
import { runFromEnvironment } from '../runtime/service.js';

const config = loadConfig({ ...process.env, ROLE: process.env.ROLE ?? 'api' });
await runFromEnvironment(config);
