/** Webhook delivery's settings (src/platform/config.ts composes them). */
import ipaddr from 'ipaddr.js';
import { DAY, boolVar, durationVar, durationsVar, group, intVar, setting } from '../env';

/**
 * Webhook delivery (src/modules/webhooks/delivery.ts, docs/webhooks.md). No environment allows endpoints on this machine
 * or the private network unless WEBHOOK_ALLOWED_NETWORKS names them (a receiver under development, the tests do).
 */
export function webhooks(production: boolean) {
  return group({
    /** WEBHOOK_DELIVERY: this instance delivers (any number of instances may; each attempt is claimed by one). */
    deliver: boolVar('WEBHOOK_DELIVERY', true),
    /** Bound of one attempt, from connecting to the last byte of the answer read. */
    timeoutMs: durationVar('WEBHOOK_TIMEOUT', '10s', 100, 60000),
    /** Waits before each retry; their number is the number of retries (jitter of up to a fifth added or taken). */
    retryScheduleMs: durationsVar('WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h,14h,24h', 10, 7 * DAY * 1000),
    /** An endpoint whose deliveries all failed for this long is disabled, with the reason the API shows. */
    disableAfterMs: durationVar('WEBHOOK_DISABLE_AFTER', '5d', 1000, 90 * DAY * 1000),
    /** Attempts, and finished deliveries and events, are kept this long, then pruned. */
    retentionMs: durationVar('WEBHOOK_RETENTION', '30d', 60000, 365 * DAY * 1000),
    /** How often an instance looks for due deliveries when no notification woke it (retries, a missed NOTIFY). */
    pollIntervalMs: durationVar('WEBHOOK_POLL_INTERVAL', '1s', 10, 600000),
    /** Attempts in flight at once on one instance: room for several tenants' shares (below) at once. */
    concurrency: intVar('WEBHOOK_CONCURRENCY', 512, 1, 10000),
    /** Attempts in flight at once to one endpoint, across the fleet. */
    maxInFlightPerEndpoint: intVar('WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 64, 1, 10000),
    /** Attempts in flight at once to one organization's endpoints, across the fleet: a tenant's share. */
    maxInFlightPerOrganization: intVar('WEBHOOK_MAX_IN_FLIGHT_PER_ORGANIZATION', 128, 1, 10000),
    /** After this many failed attempts in a row, an endpoint gets one attempt in flight at a time until one succeeds. */
    breakerAfter: intVar('WEBHOOK_BREAKER_AFTER', 5, 1, 1000),
    /** Test events and redeliveries one endpoint may be asked for per minute (429 beyond). */
    manualSendsPerMinute: intVar('WEBHOOK_MANUAL_SENDS_PER_MINUTE', 20, 1, 10000),
    /** Only https:// URLs (production's default). */
    httpsOnly: boolVar('WEBHOOK_HTTPS_ONLY', production),
    /** Networks an endpoint may resolve to although they are private, loopback or link-local (development, tests); none by default. */
    allowedNetworks: setting('WEBHOOK_ALLOWED_NETWORKS', networks('none')!, (raw, refused) => networks(raw)
      ?? refused(`must be none or a comma-separated list of networks such as 10.0.0.0/8, got "${raw}"`)),
    maxEndpointsPerOrganization: intVar('WEBHOOK_MAX_ENDPOINTS_PER_ORGANIZATION', 20, 1, 1000),
    /** Attempts per second to one organization's endpoints, per instance: a ceiling on a tenant's rate (docs/webhooks.md). */
    maxAttemptsPerSecond: intVar('WEBHOOK_MAX_ATTEMPTS_PER_SECOND', 1000, 1, 100000),
    /** After a rotation, the previous secret signs too for this long. */
    secretOverlapMs: durationVar('WEBHOOK_SECRET_OVERLAP', '24h', 0, 30 * DAY * 1000),
  });
}

/** `none`, or comma-separated networks (CIDR); null when the text is neither. */
function networks(text: string): Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> | null {
  if (text === 'none') return [];
  try {
    return text.split(',').map((cidr) => ipaddr.parseCIDR(cidr.trim()));
  } catch {
    return null;
  }
}
