/** Worker process: runs the ingestion workflows and activities. */
import { loadConfig } from '../config/index.js';
import { runFromEnvironment } from '../runtime/service.js';

const config = loadConfig({ ...process.env, ROLE: 'worker' });
await runFromEnvironment(config);
