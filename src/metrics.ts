import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { jobCountsByStatus, queueDepth } from './jobs/job-counts.ts';
import type { Store } from './store/database.ts';

/** Prometheus metrics of one process; jobs by status and queue depth are read from the database at scrape time. */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  runDuration: Histogram<'outcome'>;
  pickupLatency: Histogram;
  runAttempts: Histogram;
  tokens: Counter<'direction'>;
}

export function createMetrics(store: Store): Metrics {
  const registry = new Registry();
  const httpRequests = new Counter({
    name: 'docwright_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const runDuration = new Histogram({
    name: 'docwright_run_duration_seconds',
    help: 'Time from claim to end of a run, by outcome',
    labelNames: ['outcome'] as const,
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200],
    registers: [registry],
  });
  const pickupLatency = new Histogram({
    name: 'docwright_pickup_latency_seconds',
    help: 'Time from a run being queued to a worker starting it (first attempts)',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const runAttempts = new Histogram({
    name: 'docwright_run_attempts',
    help: 'Attempt number of each claimed run (above 1 after a worker was lost)',
    buckets: [1, 2, 3, 5, 10],
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'docwright_model_tokens_total',
    help: 'Model tokens consumed by runs in this process',
    labelNames: ['direction'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'docwright_jobs',
    help: 'Jobs by status (whole database)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const counts = await jobCountsByStatus(store.db);
      this.reset();
      for (const status of ['active', 'completed', 'archived', 'failed'] as const) {
        this.set({ status }, counts.get(status) ?? 0);
      }
    },
  });
  new Gauge({
    name: 'docwright_queue_depth',
    help: 'Runs waiting for a worker (whole database)',
    registers: [registry],
    async collect() {
      this.set(await queueDepth(store.db));
    },
  });
  return { registry, httpRequests, runDuration, pickupLatency, runAttempts, tokens };
}
