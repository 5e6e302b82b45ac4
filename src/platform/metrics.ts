import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MikroORM } from '@mikro-orm/postgresql';

/** The parts of tarn's pool (knex's, hence MikroORM's) the gauges read. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

/** Label value of a request no router matched (an unknown path, or one refused before routing: 429, 503). */
export const UNMATCHED_ROUTE = '(unmatched)';

/** GraphQL operation names kept as label values; later new names are counted under OTHER_OPERATION. */
export const MAX_OPERATION_NAMES = 200;
export const ANONYMOUS_OPERATION = '(anonymous)';
/** The request failed before an operation was chosen (syntax, validation, unknown operationName). */
export const UNKNOWN_OPERATION = '(unknown)';
export const OTHER_OPERATION = '(other)';

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,99}$/;
const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * Every metric of one app, in a registry of its own (tests run several apps in one process), exposed in
 * the Prometheus text format at /metrics (src/platform/http/metrics.ts). Label values are bounded: route templates,
 * never raw URLs; GraphQL operation names up to MAX_OPERATION_NAMES distinct ones; error codes of our own.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly operationNames = new Set<string>();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving an HTTP request to its response headers, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly graphqlOperations = new Counter({
    name: 'graphql_operations_total',
    help: 'GraphQL operations answered, by operation name, type and the code of the first error (none: no error)',
    labelNames: ['operation_name', 'operation_type', 'error_code'] as const,
    registers: [this.registry],
  });

  readonly graphqlDuration = new Histogram({
    name: 'graphql_operation_duration_seconds',
    help: 'Time from Apollo receiving a GraphQL operation to its response, by operation name and type',
    labelNames: ['operation_name', 'operation_type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429, by policy (api, token, or a sign-in lockout)',
    labelNames: ['policy'] as const,
    registers: [this.registry],
  });

  readonly changeEvents = new Counter({
    name: 'change_events_total',
    help: 'Change notifications received from the database, by kind (project, trade, template, document, version)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly changeListenerListening = new Gauge({
    name: 'change_listener_listening',
    help: '1 while the instance reads its change source (with CHANGE_BUS_URL: the bus reachable; without: its own decoder streaming), 0 otherwise',
    registers: [this.registry],
  });

  readonly changeListenerHearing = new Gauge({
    name: 'change_listener_hearing',
    help: '1 while the instance\'s heartbeats (messages to itself) come back within their bound, 0 otherwise',
    registers: [this.registry],
  });

  readonly changeDecoderStatus = new Gauge({
    name: 'change_decoder_status',
    help: '1 for what this instance\'s decoder does now: streaming (it decodes the slot), making the slot (waiting for older transactions to end), connecting, standby (another instance decodes), off',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly changeSlotRetained = new Gauge({
    name: 'change_slot_retained_bytes',
    help: 'WAL the decoder\'s slot holds back (from its restart position to the server\'s current one), measured every 10 s by the instance that decodes; absent elsewhere',
    registers: [this.registry],
  });

  readonly changeSlotLag = new Gauge({
    name: 'change_slot_lag_bytes',
    help: 'WAL past the slot\'s confirmed position (decoded and published to the bus up to there), measured with change_slot_retained_bytes',
    registers: [this.registry],
  });

  readonly changeGaps = new Counter({
    name: 'change_gaps_total',
    help: 'Times changes may have been missed (a slot made anew, a stream that does not continue from the instance\'s position): subscribers got RESYNC',
    registers: [this.registry],
  });

  readonly changeDelay = new Histogram({
    name: 'change_delay_seconds',
    help: 'From a transaction\'s commit (the database server\'s clock) to its messages reaching this instance',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    registers: [this.registry],
  });

  readonly dbPrimaryWritable = new Gauge({
    name: 'db_primary_writable',
    help: '1 while the server DATABASE_URL reaches takes writes, 0 while it is in recovery or read-only (a failover or switchover under way)',
    registers: [this.registry],
  });

  readonly databaseReads = new Counter({
    name: 'db_reads_total',
    help: 'Read-only requests (REST GETs, GraphQL queries) by where they read: primary, or a replica (host:port/database)',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });

  readonly replicaLag = new Gauge({
    name: 'db_replica_lag_seconds',
    help: 'How far each replica is behind the primary at the last poll (within a poll); absent while unknown',
    labelNames: ['replica'] as const,
    registers: [this.registry],
  });

  readonly replicaUsable = new Gauge({
    name: 'db_replica_usable',
    help: '1 while a replica takes reads (reachable, a standby, within DATABASE_REPLICA_MAX_LAG_MS), 0 while skipped',
    labelNames: ['replica'] as const,
    registers: [this.registry],
  });

  readonly changeListenerHeartbeatsMissed = new Counter({
    name: 'change_listener_heartbeats_missed_total',
    help: 'Heartbeats committed but not heard back within LISTENER_HEARTBEAT_TIMEOUT_MS',
    registers: [this.registry],
  });

  readonly subscriptionConnections = new Gauge({
    name: 'graphql_subscription_connections',
    help: 'Open WebSocket connections on /graphql whose caller is authenticated',
    registers: [this.registry],
  });

  readonly subscriptionsActive = new Gauge({
    name: 'graphql_subscriptions_active',
    help: 'Running GraphQL subscriptions, by subscription field',
    labelNames: ['subscription'] as const,
    registers: [this.registry],
  });

  readonly subscriptionUpdates = new Counter({
    name: 'graphql_subscription_updates_total',
    help: 'Updates sent to subscribers, by subscription field',
    labelNames: ['subscription'] as const,
    registers: [this.registry],
  });

  readonly subscriptionRefusals = new Counter({
    name: 'graphql_subscription_refusals_total',
    help: 'WebSocket connections closed or subscriptions refused, by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly subscriptionSlowReaders = new Counter({
    name: 'graphql_subscription_slow_readers_total',
    help: 'WebSocket connections closed 4503 because their client did not read what was sent to it, by bound (bytes, time)',
    labelNames: ['bound'] as const,
    registers: [this.registry],
  });

  readonly admissionQueueLength = new Gauge({
    name: 'admission_queue_length',
    help: 'Requests waiting for a turn, by cost class (docs/faults.md, "Overload")',
    labelNames: ['class'] as const,
    registers: [this.registry],
  });

  readonly admissionWait = new Histogram({
    name: 'admission_wait_seconds',
    help: 'Time a request waited for its turn before it ran, by cost class',
    labelNames: ['class'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly admissionRefusals = new Counter({
    name: 'admission_refusals_total',
    help: 'Requests refused with 503 by admission control, by cost class and reason (queue-full: at once; waited: after the longest wait)',
    labelNames: ['class', 'reason'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded, failed, gone, timeout, unreachable, refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookEventsDelivered = new Counter({
    name: 'webhook_events_delivered_total',
    help: 'Events delivered (a 2xx answer) to an endpoint, by event type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveryLag = new Histogram({
    name: 'webhook_delivery_lag_seconds',
    help: 'From an event\'s commit-time trigger to its 2xx answer, retries included',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600, 3600, 86400],
    registers: [this.registry],
  });

  readonly webhookDue = new Gauge({
    name: 'webhook_deliveries_due',
    help: 'Deliveries due now and not yet attempted, at the last sample (every poll, at most every 10 s)',
    registers: [this.registry],
  });

  readonly webhookOldestDue = new Gauge({
    name: 'webhook_oldest_due_seconds',
    help: 'How long the oldest due delivery has been waiting, at the last sample: the backlog\'s lag',
    registers: [this.registry],
  });

  readonly webhookEndpointsDisabled = new Counter({
    name: 'webhook_endpoints_disabled_total',
    help: 'Endpoints disabled by delivery, by reason (gone: a 410 answer; failing: every delivery failed for WEBHOOK_DISABLE_AFTER)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** What admission control reports (src/platform/http/admission.ts). */
  readonly admission = {
    waited: (cls: string, ms: number) => this.admissionWait.observe({ class: cls }, ms / 1000),
    refused: (cls: string, reason: string) => this.admissionRefusals.inc({ class: cls, reason }),
    queueLength: (cls: string, n: number) => this.admissionQueueLength.set({ class: cls }, n),
  };

  constructor() {
    // Process metrics (CPU, memory, handles, GC) and event-loop lag (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Gauges of the request pool, read at each scrape. */
  watchPool(orm: MikroORM): void {
    const pool = () => (orm.em.getKnex().client as { pool?: TarnPool }).pool;
    const gauge = (name: string, help: string, read: (p: TarnPool) => number) => new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        const p = pool();
        this.set(p ? read(p) : 0);
      },
    });
    gauge('db_pool_connections_in_use', 'Database connections of the request pool lent to a request', (p) => p.numUsed());
    gauge('db_pool_connections_idle', 'Open database connections of the request pool waiting for a request', (p) => p.numFree());
    gauge('db_pool_connections_max', 'Size of the request pool (DATABASE_POOL_SIZE)', (p) => p.max);
    gauge('db_pool_acquires_pending', 'Requests waiting for a connection of the request pool', (p) => p.numPendingAcquires());
    gauge('db_pool_creates_pending', 'Connections of the request pool being opened', (p) => p.numPendingCreates());
  }

  /**
   * The label of a GraphQL operation: its name when it has a valid one, among the first MAX_OPERATION_NAMES
   * seen; clients choose names freely, and each new label value is a new time series.
   */
  operationLabel(name: string | null | undefined, resolved: boolean): string {
    if (!resolved) return UNKNOWN_OPERATION;
    if (!name) return ANONYMOUS_OPERATION;
    if (!GRAPHQL_NAME.test(name)) return OTHER_OPERATION;
    if (this.operationNames.has(name)) return name;
    if (this.operationNames.size >= MAX_OPERATION_NAMES) return OTHER_OPERATION;
    this.operationNames.add(name);
    return name;
  }

  /** The label of an error code: ours are upper-case words; anything else is OTHER. */
  static errorCodeLabel(code: unknown): string {
    if (code === undefined) return 'none';
    return typeof code === 'string' && ERROR_CODE.test(code) ? code : 'OTHER';
  }

  /** The exposition in the Prometheus text format. */
  exposition(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
