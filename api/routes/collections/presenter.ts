import type { Collection } from '../../../core/memory-model.js';

export const presentCollection = (collection: Collection) => ({
  id: collection.id,
  name: collection.name,
  description: collection.description,
  metadata: collection.metadata,
  created_at: collection.created_at.toISOString(),
});
