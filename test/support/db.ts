/** Direct read access to the stack's database, for asserting what an API cannot show (e.g. that no chunk survives a delete). */
import { MongoClient, type Db } from 'mongodb';
import { stack } from './client.js';

let client: MongoClient | null = null;

export async function database(): Promise<Db> {
  const env = stack().serviceEnv;
  if (!client) {
    client = new MongoClient(env.MONGODB_URI!, { retryWrites: false });
    await client.connect();
  }
  return client.db(env.MONGODB_DB);
}

export async function closeDatabase(): Promise<void> {
  await client?.close();
  client = null;
}
