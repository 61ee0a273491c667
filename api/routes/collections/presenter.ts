import type { CollectionDoc } from '../../../store/collections.js';

export const presentCollection = (collection: CollectionDoc) => ({
  id: collection._id,
  name: collection.name,
  description: collection.description,
  metadata: collection.metadata,
  created_at: collection.created_at.toISOString(),
});
