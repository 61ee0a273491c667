/**
 * A Temporal activity interceptor that times every activity (one per ingestion stage: read,
 * structure, embed and index, …) into engram_activity_duration_seconds{activity, outcome}.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { activityDuration } from '../core/metrics.js';

export const activityMetrics: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const stop = activityDuration.startTimer({ activity: ctx.info.activityType });
      try {
        const result = await next(input);
        stop({ outcome: 'completed' });
        return result;
      } catch (error) {
        stop({ outcome: 'failed' });
        throw error;
      }
    },
  },
});
