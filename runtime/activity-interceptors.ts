/**
 * The worker's activity interceptors, in the order they wrap every activity: timing into
 * engram_activity_duration_seconds{activity, outcome}, and the heartbeat keep-alive.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { keepAlive } from '../activities/progress.js';
import { activityDuration } from '../core/metrics.js';

const activityMetrics: ActivityInterceptorsFactory = (ctx) => ({
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

/** Every activity with a heartbeat timeout beats while it runs, not only at its progress points. */
const activityKeepAlive: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    execute: (input, next) => keepAlive(ctx, () => next(input)),
  },
});

export const activityInterceptors: ActivityInterceptorsFactory[] = [activityMetrics, activityKeepAlive];
