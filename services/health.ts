import type { Store } from '../store/index.js';
import type { Orchestrator } from './orchestrator.js';

export interface Readiness {
  ready: boolean;
  checks: { mongodb: boolean; temporal: boolean };
}

export function createHealthService(store: Store, orchestrator: Orchestrator) {
  return {
    async readiness(): Promise<Readiness> {
      const [mongodb, temporal] = await Promise.all([
        store.ping().then(
          () => true,
          () => false,
        ),
        orchestrator.healthy(),
      ]);
      return { ready: mongodb && temporal, checks: { mongodb, temporal } };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
