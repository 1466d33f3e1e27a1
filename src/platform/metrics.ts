import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bearerToken } from './auth.ts';
import type { Services } from './context.ts';
import { poolStats } from './db/database.ts';
import { UnauthorizedError } from './errors.ts';

/** Methods kept as a label value; anything else a client invents is counted as OTHER. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Latency buckets in seconds: from a cached read to a merge of a large space. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Request, job and database metrics in the Prometheus text format, through prom-client.
 *
 * Labels are bounded: a request is labelled with its method, its route *pattern*
 * (`/v1/spaces/:spaceId`, or `unmatched` when no route matched) and its status class (`2xx`), never
 * with its URL, so an id in a path cannot create a new time series. Job counts are read from the
 * database when Prometheus scrapes (the queued and running rows are under a partial index), and
 * failures are counted as this process's workers see them. Each app has its own registry, so two
 * servers in one process (tests) never share counters.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status_class'>;
  private readonly duration: Histogram<'method' | 'route' | 'status_class'>;
  readonly jobFailures: Counter<'type' | 'outcome'>;

  constructor(services: Services) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const labelNames = ['method', 'route', 'status_class'] as const;
    this.requests = new Counter({ name: 'folio_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status class', labelNames, registers });
    this.duration = new Histogram({
      name: 'folio_http_request_duration_seconds',
      help: 'Time from receiving a request to sending the answer, by method, route pattern and status class',
      labelNames,
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.jobFailures = new Counter({
      name: 'folio_job_failures_total',
      help: 'Failed job attempts seen by the workers of this process: outcome "retry" (it will run again) or "failed" (no attempt left)',
      labelNames: ['type', 'outcome'],
      registers,
    });

    const db = services.db;
    new Gauge({
      name: 'folio_jobs',
      help: 'Jobs waiting (queued, including those scheduled later) or running, by type',
      labelNames: ['type', 'status'],
      registers,
      async collect() {
        this.reset();
        const { rows } = await sql<{ type: string; status: string; n: number }>`
          SELECT type, status, count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running') GROUP BY type, status`.execute(db);
        for (const r of rows) this.set({ type: r.type, status: r.status }, r.n);
      },
    });
    new Gauge({
      name: 'folio_jobs_due',
      help: 'Queued jobs whose time has come (the backlog the workers have not taken yet)',
      registers,
      async collect() {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM jobs WHERE status = 'queued' AND run_at <= now()`.execute(db);
        this.set(rows[0]?.n ?? 0);
      },
    });
    new Gauge({
      name: 'folio_jobs_oldest_due_age_seconds',
      help: 'How long the oldest due queued job has been waiting (0 when none is due)',
      registers,
      async collect() {
        const { rows } = await sql<{ age: number | null }>`
          SELECT extract(epoch FROM now() - min(run_at))::float8 AS age FROM jobs WHERE status = 'queued' AND run_at <= now()`.execute(db);
        this.set(Math.max(0, Number(rows[0]?.age ?? 0)));
      },
    });

    const engine = services.config.databaseUrl ? 'postgres' : 'pglite';
    new Gauge({ name: 'folio_database_info', help: 'The database engine in use (value 1)', labelNames: ['engine'], registers }).set({ engine }, 1);
    if (engine === 'postgres') {
      // PGlite is one session inside this process: there is no pool to report.
      new Gauge({
        name: 'folio_db_pool_connections',
        help: 'PostgreSQL pool connections: "total" open, "idle" among them, "waiting" queries queued for a connection',
        labelNames: ['state'],
        registers,
        collect() {
          const stats = poolStats(db);
          if (!stats) return;
          this.set({ state: 'total' }, stats.total);
          this.set({ state: 'idle' }, stats.idle);
          this.set({ state: 'waiting' }, stats.waiting);
        },
      });
    }
  }

  /** Counts one answered request. */
  observe(req: FastifyRequest, reply: FastifyReply): void {
    const labels = {
      method: METHODS.has(req.method) ? req.method : 'OTHER',
      route: req.routeOptions.url ?? 'unmatched',
      status_class: `${Math.floor(reply.statusCode / 100)}xx`,
    };
    this.requests.inc(labels);
    this.duration.observe(labels, reply.elapsedTime / 1000);
  }
}

function sameSecret(a: string, b: string): boolean {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first byte.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * GET /metrics when METRICS=true: every answered request is observed, and the endpoint asks for
 * `Authorization: Bearer <METRICS_TOKEN>` when that is set. It is never rate-limited (a scraper
 * must not be throttled by the traffic it measures) and needs no API token.
 */
export function registerMetrics(app: FastifyInstance, services: Services): Metrics | undefined {
  const { metrics: enabled, metricsToken } = services.config;
  if (!enabled) return undefined;
  const metrics = new Metrics(services);
  services.jobs.onFailure = (type, final) => metrics.jobFailures.inc({ type, outcome: final ? 'failed' : 'retry' });
  if (!metricsToken) app.log.warn('METRICS=true without METRICS_TOKEN: GET /metrics answers anyone who can reach this port');

  app.addHook('onResponse', (req, reply, done) => {
    metrics.observe(req, reply);
    done();
  });
  app.get('/metrics', { config: { public: true, rateLimit: false }, schema: { hide: true } }, async (req, reply) => {
    if (metricsToken) {
      const token = bearerToken(req.headers.authorization);
      if (!token || !sameSecret(token, metricsToken)) {
        throw new UnauthorizedError('GET /metrics needs "Authorization: Bearer <METRICS_TOKEN>"');
      }
    }
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });
  return metrics;
}
