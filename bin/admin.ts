/**
 * Admin CLI: `npm run admin -- <command>`. Talks to MongoDB directly (MONGODB_URI, or the
 * running dev stack recorded in data/dev-stack.json). Run with `help` for the commands.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/index.js';
import { AdminError, createAdminService } from '../services/admin.js';
import { openStore } from '../store/index.js';

const USAGE = `Usage: npm run admin -- <command> [options]   (add --json for machine-readable output)

  tenant create <name>                      create a tenant
  tenant list                               list tenants
  key create --tenant <id|name> [--name N]  create an API key (printed once; only its hash is stored)
  key list [--tenant <id|name>]             list keys (prefix, status; never the key)
  key revoke <key-id>                       revoke a key (effective within 5 s)
  collection create --tenant <id|name> <name>
  collection list --tenant <id|name>
  bootstrap --tenant <name> --collection <name> [--name N]
                                            tenant (reused) + new key + collection (reused)

Connects to MONGODB_URI, or to the dev stack started by \`npm run dev\`.`;

function mongoUri(dataDir: string): string {
  if (process.env.MONGODB_URI) return process.env.MONGODB_URI;
  try {
    const stack = JSON.parse(readFileSync(path.join(dataDir, 'dev-stack.json'), 'utf8')) as { mongoUri?: string };
    if (stack.mongoUri) return stack.mongoUri;
  } catch {
    // fall through
  }
  throw new AdminError('MONGODB_URI is not set and no running dev stack was found (start one with `npm run dev`)');
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      name: { type: 'string' },
      collection: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [resource, action, arg] = positionals;
  if (values.help || !resource || resource === 'help') {
    console.log(USAGE);
    return;
  }
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const store = await openStore(config, mongoUri(config.DATA_DIR));
  const admin = createAdminService(store);
  const print = (value: unknown, human: string) => console.log(values.json ? JSON.stringify(value, null, 2) : human);
  const need = (value: string | undefined, what: string): string => {
    if (!value) throw new AdminError(`missing ${what}\n\n${USAGE}`);
    return value;
  };
  try {
    const command = `${resource} ${action ?? ''}`.trim();
    switch (command) {
      case 'tenant create': {
        const tenant = await admin.createTenant(need(arg, '<name>'));
        print({ id: tenant._id, name: tenant.name }, `tenant ${tenant._id} ${tenant.name}`);
        break;
      }
      case 'tenant list': {
        const tenants = await admin.listTenants();
        print(
          tenants.map((t) => ({ id: t._id, name: t.name, created_at: t.created_at })),
          tenants.map((t) => `${t._id}  ${t.name}`).join('\n'),
        );
        break;
      }
      case 'key create': {
        const { key, doc } = await admin.createKey(need(values.tenant, '--tenant'), values.name ?? 'cli');
        print(
          { id: doc._id, tenant_id: doc.tenant_id, api_key: key },
          `key ${doc._id} for tenant ${doc.tenant_id}\n${key}\n(store it now: it is not shown again)`,
        );
        break;
      }
      case 'key list': {
        const keys = await admin.listKeys(values.tenant);
        print(
          keys.map((k) => ({
            id: k._id,
            tenant_id: k.tenant_id,
            name: k.name,
            prefix: k.prefix,
            revoked_at: k.revoked_at,
            created_at: k.created_at,
          })),
          keys.map((k) => `${k._id}  ${k.prefix}…  ${k.name}  tenant=${k.tenant_id}  ${k.revoked_at ? 'REVOKED' : 'active'}`).join('\n'),
        );
        break;
      }
      case 'key revoke': {
        await admin.revokeKey(need(arg, '<key-id>'));
        print({ id: arg, revoked: true }, `revoked ${arg}`);
        break;
      }
      case 'collection create': {
        const collection = await admin.createCollection(need(values.tenant, '--tenant'), need(arg, '<name>'));
        print(
          { id: collection._id, name: collection.name, tenant_id: collection.tenant_id },
          `collection ${collection._id} ${collection.name}`,
        );
        break;
      }
      case 'collection list': {
        const items = await admin.listCollections(need(values.tenant, '--tenant'));
        print(
          items.map((c) => ({ id: c._id, name: c.name })),
          items.map((c) => `${c._id}  ${c.name}`).join('\n'),
        );
        break;
      }
      case 'bootstrap': {
        const result = await admin.bootstrap(
          need(values.tenant, '--tenant'),
          need(values.collection, '--collection'),
          values.name ?? 'bootstrap',
        );
        print(
          { tenant_id: result.tenant._id, api_key: result.apiKey, key_id: result.keyId, collection_id: result.collection._id },
          `tenant ${result.tenant._id}\napi key ${result.apiKey}\ncollection ${result.collection._id} ${result.collection.name}`,
        );
        break;
      }
      default:
        throw new AdminError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof AdminError || (error instanceof Error && error.name === 'AppError')) {
    console.error(`error: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
