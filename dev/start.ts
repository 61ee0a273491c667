/**
 * `npm run dev`: the embedded stack (Temporal dev server with its Web UI, the MongoDB stand-in
 * on its journal backend under DATA_DIR/mongo-store) unless MONGODB_URI / TEMPORAL_ADDRESS point elsewhere, then the API
 * and a worker in this process, a development API key and collection, and the URLs to use.
 */
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/index.js';
import { createAdminService } from '../services/admin.js';
import { startService } from '../runtime/service.js';
import { registerCleanup } from './embedded.js';
import { startBackingServices } from './stack.js';

const config = loadConfig({ ...process.env, ROLE: 'all' });
const stackFile = path.join(config.DATA_DIR, 'dev-stack.json');
const backing = await startBackingServices({
  dataDir: config.DATA_DIR,
  mongoBackend: config.EMBEDDED_MONGO_BACKEND,
  temporalPort: Number(process.env.TEMPORAL_PORT ?? 7233),
  temporalUiPort: Number(process.env.TEMPORAL_UI_PORT ?? 8233),
  mongoPort: Number(process.env.MONGO_PORT ?? 27027),
});
const service = await startService(config, { mongoUri: backing.mongoUri, temporalAddress: backing.temporalAddress });
registerCleanup(async () => {
  rmSync(stackFile, { force: true });
  await service.stop();
});

const admin = createAdminService(service.store);
const dev = await admin.bootstrap('dev', 'default', `dev ${new Date().toISOString()}`);
writeFileSync(
  stackFile,
  JSON.stringify({ mongoUri: backing.mongoUri, temporalAddress: backing.temporalAddress, apiUrl: service.url }, null, 2),
);

const banner = [
  '',
  'Memory service is running.',
  `  API:           ${service.url}`,
  `  Temporal UI:   ${backing.temporalUiUrl ?? '(external Temporal: see your deployment)'}`,
  `  MongoDB:       ${backing.mongoUri}${backing.embedded.mongo ? `  (embedded stand-in, ${config.EMBEDDED_MONGO_BACKEND} backend, data in its ${config.EMBEDDED_MONGO_HEAP_MB} MiB heap and under ${config.DATA_DIR})` : ''}`,
  `  API key:       ${dev.apiKey}   (tenant "dev", created just now)`,
  `  Collection:    ${dev.collection.id}   ("default")`,
  '',
  'Try:',
  `  curl -s -X POST ${service.url}/v1/memories -H "Authorization: Bearer ${dev.apiKey}" -H 'Content-Type: application/json' \\`,
  `    -d '{"collection_id":"${dev.collection.id}","raw_text":"Alice manages the Berlin office."}'`,
  `  curl -s -X POST ${service.url}/v1/memories/search -H "Authorization: Bearer ${dev.apiKey}" -H 'Content-Type: application/json' \\`,
  `    -d '{"query":"Who runs the Berlin office?","collection_ids":["${dev.collection.id}"]}'`,
  '',
  'Ctrl-C stops everything.',
  '',
];
process.stderr.write(banner.join('\n'));
