/** Query parameters of the workflow reads, with the spec's defaults and ranges (Workflows, Limits). */
import { z } from 'zod';
import { MAX_OFFSET } from '../../../core/limits.js';
import { intParam, uuid } from '../common-schema.js';

const collectionId = z.string({ error: 'collection_id is required' }).uuid('collection_id must be a UUID');

const booleanParam = (name: string, fallback: boolean) =>
  z.preprocess(
    (value) => (value === undefined || value === '' ? String(fallback) : value),
    z.enum(['true', 'false'], { error: `${name} must be true or false` }).transform((value) => value === 'true'),
  );

export const listInstancesQuery = z.object({
  collection_id: collectionId,
  pattern_id: z.string().uuid('pattern_id must be a UUID').optional(),
  include_unpatterned: booleanParam('include_unpatterned', true),
  offset: intParam('offset', 0, MAX_OFFSET, 0),
  limit: intParam('limit', 1, 100, 25),
});

export const instanceParams = z.object({ instance_id: uuid });

export const instanceQuery = z.object({
  collection_id: collectionId,
  history_limit: intParam('history_limit', 1, 200, 20),
  similar_limit: intParam('similar_limit', 0, 25, 5),
});

export const listPatternsQuery = z.object({
  collection_id: collectionId,
  offset: intParam('offset', 0, MAX_OFFSET, 0),
  limit: intParam('limit', 1, 100, 25),
});

export const patternParams = z.object({ pattern_id: uuid });

export const patternQuery = z.object({
  collection_id: collectionId,
  instance_offset: intParam('instance_offset', 0, MAX_OFFSET, 0),
  instance_limit: intParam('instance_limit', 1, 200, 25),
});
