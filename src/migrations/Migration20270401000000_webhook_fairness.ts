import { Migration } from '@mikro-orm/migrations';

/**
 * Fair webhook claims (issue 40, docs/webhooks.md "Fairness"): one tenant's slow endpoints occupy their own share of
 * the fleet's deliveries and nothing else.
 *
 * - `webhook_delivery.leased_until`: the end of the lease of an attempt in flight (cleared when its result is
 *   written). What a claim counts, per endpoint and per organization, across every instance; a lease that ran out (an
 *   instance killed in the middle) counts no more.
 * - `webhook_endpoint.consecutive_failures`: the circuit breaker's count (reset by a success); past a threshold the
 *   endpoint gets one attempt in flight at a time, a probe, until one succeeds.
 * - `webhook_endpoint.paused_until`: a receiver's 429, 502, 503 or 504 (and its `Retry-After`) pauses the endpoint.
 * - `webhook_endpoint.manual_sends` since `manual_window_started_at`: test events and redeliveries asked of the endpoint
 *   in the current minute (WEBHOOK_MANUAL_SENDS_PER_MINUTE), counted where the request already locks the endpoint's row.
 * - `webhook_claim(...)`: the claim, one round trip. Claims take turns on a transaction-level advisory lock, and the
 *   claim's statement runs after it with a snapshot of its own (a volatile function's statements each take one), so
 *   that it sees the leases of every claim before it: the limits hold across the fleet, not per instance. Only the
 *   delivery loops take that lock; no writer ever waits for it. `p_answered`: the caller's deliveries answered whose
 *   results are not written yet, leased still but no longer in flight at their receiver.
 */

const CLAIM_FUNCTION = `create or replace function webhook_claim(
  p_limit integer, p_lease_seconds float8, p_per_endpoint integer, p_per_organization integer, p_breaker_after integer,
  p_answered uuid[])
returns table (id uuid, attempt integer, event_id uuid, type text, body text, created_epoch float8, endpoint_id uuid,
  organization_id uuid, url text, secret text, previous_secret text, failing_since timestamptz, consecutive_failures integer)
language plpgsql volatile as $$
#variable_conflict use_column
begin
  perform pg_advisory_xact_lock(hashtext('webhook_claim'));
  return query
  with leased as (
    select d.endpoint_id, count(*)::integer as n from webhook_delivery d
    where d.leased_until > clock_timestamp() and d.id <> all(p_answered) group by d.endpoint_id
  ), endpoints as (
    select ep.id, ep.organization_id, coalesce(l.n, 0) as busy,
      case when ep.consecutive_failures >= p_breaker_after then 1 else p_per_endpoint end - coalesce(l.n, 0) as free
    from webhook_endpoint ep left join leased l on l.endpoint_id = ep.id
    where ep.disabled_at is null
  ), organizations as (
    select e.organization_id, p_per_organization - sum(e.busy) as free from endpoints e group by e.organization_id
  ), candidates as (
    -- Each endpoint's oldest due deliveries, as many as it has room for; then, per organization, in turns.
    select c.id, e.organization_id, c.next_attempt_at,
      row_number() over (partition by e.organization_id order by c.next_attempt_at, c.id) as turn
    from endpoints e
    join webhook_endpoint ep on ep.id = e.id
    cross join lateral (
      select d.id, d.next_attempt_at from webhook_delivery d
      where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= clock_timestamp()
      order by d.next_attempt_at limit e.free
      for update of d skip locked
    ) c
    where e.free > 0 and (ep.paused_until is null or ep.paused_until <= clock_timestamp())
  ), chosen as (
    -- Round robin between organizations: every organization's first turn, then every second one, ...
    select c.id from candidates c join organizations o on o.organization_id = c.organization_id
    where c.turn <= o.free
    order by c.turn, c.next_attempt_at
    limit p_limit
  )
  update webhook_delivery d set attempts = d.attempts + 1,
    next_attempt_at = clock_timestamp() + make_interval(secs => p_lease_seconds),
    leased_until = clock_timestamp() + make_interval(secs => p_lease_seconds)
  from chosen, webhook_event e, webhook_endpoint ep
  where d.id = chosen.id and e.id = d.event_id and ep.id = d.endpoint_id
  returning d.id, d.attempts, e.id, e.type, e.payload::text, extract(epoch from e.created_at)::float8, ep.id, ep.organization_id,
    ep.url, ep.secret, case when ep.previous_secret_expires_at > clock_timestamp() then ep.previous_secret end, ep.failing_since,
    ep.consecutive_failures;
end
$$;`;

export class Migration20270401000000_webhook_fairness extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "webhook_delivery" add column "leased_until" timestamptz null;');
    this.addSql(`alter table "webhook_endpoint" add column "consecutive_failures" integer not null default 0, add column "paused_until" timestamptz null,
      add column "manual_sends" integer not null default 0, add column "manual_window_started_at" timestamptz null;`);
    this.addSql(`create index "webhook_delivery_leased_index" on "webhook_delivery" ("endpoint_id") include ("leased_until") where "leased_until" is not null;`);
    this.addSql(`create index "webhook_delivery_endpoint_due_index" on "webhook_delivery" ("endpoint_id", "next_attempt_at") where "status" = 'pending';`);
    // Claims look for due deliveries per endpoint now; one index fewer to write at each claim and each result.
    this.addSql('drop index "webhook_delivery_due_index";');
    this.addSql(CLAIM_FUNCTION);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists webhook_claim(integer, float8, integer, integer, integer, uuid[]);');
    this.addSql(`create index "webhook_delivery_due_index" on "webhook_delivery" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql('drop index if exists "webhook_delivery_endpoint_due_index";');
    this.addSql('drop index if exists "webhook_delivery_leased_index";');
    this.addSql(`alter table "webhook_endpoint" drop column "consecutive_failures", drop column "paused_until",
      drop column "manual_sends", drop column "manual_window_started_at";`);
    this.addSql('alter table "webhook_delivery" drop column "leased_until";');
  }
}
