import { HeaderMap, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { GraphQLError, type DocumentNode, type GraphQLField, type GraphQLSchema } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { LRUCache } from 'lru-cache';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { Extensions } from 'type-graphql';
import { TooManyRequestsError, ValidationError, withoutStack } from '../errors/errors';
import { pageOf, type PageRange } from '../database/pagination';
import type { Quota } from '../http/rate-limiters';
import { GRAPHQL_LIMITS, limitError } from './limits';

/**
 * What a GraphQL operation costs (docs/rate-limits.md, "GraphQL cost"), in values of the answer:
 *
 * - **requested**, before it runs, from the document and its variables: every field selected counts 1, and what a
 *   list's elements select counts once per element it may hold: the page its `first` gives (coerced, then read as
 *   the field reads it: its default when absent, clamped or refused by its range), or the length of the list of ids
 *   asked for. A list the API does not page (a project's templates) counts one element:
 *   its length is the data's, not the caller's choice. Refused over GRAPHQL_LIMITS.maxCost (COST_LIMIT), and when
 *   the caller's budget cannot cover it (429).
 * - **actual**, once it ran: the values its answer holds (every field of every object, a list of scalars one).
 *   Charged to the caller's budget.
 */

/** Declares a list field's `first` (its range, its default): the field reads it with pageOf(), the cost here. */
export const Paged = (range: PageRange) => Extensions({ page: range });

/** The range a field declared with @Paged. */
export const pageRangeOf = (field: GraphQLField<unknown, unknown>) => field.extensions.page as PageRange | undefined;

/**
 * How many elements a field's list may hold, as far as its arguments bound it. A `first` the field refuses throws its
 * ValidationError here, before anything runs.
 */
function listBound(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number {
  const range = pageRangeOf(field);
  if (range) return pageOf(range, args.first as number | null | undefined);
  for (const value of Object.values(args)) if (Array.isArray(value)) return value.length;
  return 1;
}

const estimator: ComplexityEstimator = ({ field, args, childComplexity }) => 1 + listBound(field, args) * childComplexity;

/**
 * The requested cost of the operation; null when its variables do not coerce (the executor then answers graphql-js's
 * own error, and nothing runs or is charged). Throws the ValidationError of a `first` its field refuses.
 */
export function requestedCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined, variables: Record<string, unknown> | undefined): number | null {
  try {
    return getComplexity({ schema, query: document, operationName, variables, estimators: [estimator] });
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    return null;
  }
}

/**
 * The actual cost of an answer: the values its `data` holds. Recursive: an answer is as deep as the operation, which
 * the depth limit bounds, and the recursion took half the time of an explicit stack over a dashboard's 90,000 values.
 */
export function answerCost(data: unknown): number {
  if (data === null || typeof data !== 'object') return 0;
  let values = 0;
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) values += answerCost(data[i]);
    return values;
  }
  // Object.keys rather than for...in: a third faster over a dashboard's answer (no prototype chain to walk).
  const keys = Object.keys(data);
  values = keys.length;
  for (let i = 0; i < keys.length; i++) {
    const child = (data as Record<string, unknown>)[keys[i]];
    if (child !== null && typeof child === 'object') values += answerCost(child);
  }
  return values;
}

/** The caller's budget as the store last told: what is left, and when it resets. */
export interface BudgetState {
  remaining: number;
  resetSeconds: number;
}

/** What one request's operation cost, for its answer's `extensions.cost` and RateLimit headers. */
interface OperationCost extends BudgetState {
  requested: number;
  actual: number;
}

/** A refusal for the budget: what is left (too little), for the RateLimit headers. */
class BudgetRefusal extends TooManyRequestsError {
  constructor(message: string, retryAfterSeconds: number, policy: Quota, readonly budget: BudgetState) {
    super(message, retryAfterSeconds, policy);
  }
}

/** Whole seconds until `ms` from now, at least 1. */
const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/**
 * The callers' GraphQL budgets (the `graphql-cost` quota, on the rate limits' store). Each instance remembers what
 * the store said of a caller at its last charge, so that a caller known to be out is refused before any work, the
 * body unread: a flood costs a lookup in memory per request. A caller may overdraw by the operations that were
 * already running, on each instance, when it ran out.
 */
export class CostBudget {
  private readonly known = new LRUCache<string, { remaining: number; resetAt: number }>({ max: 10_000 });

  constructor(readonly quota: Quota) {}

  /** Refuses (429) a caller whose budget, as last charged on this instance, cannot cover `cost`. */
  check(key: string, cost: number): void {
    const known = this.known.get(key);
    if (!known || known.resetAt <= Date.now() || known.remaining >= cost) return;
    const retryAfter = seconds(known.resetAt - Date.now());
    const what = cost > 1 ? `this operation's requested cost is ${cost}, ${Math.max(0, known.remaining)} is left` : 'none is left';
    throw withoutStack(() => new BudgetRefusal(
      `Too many GraphQL operations: at most a cost of ${this.quota.points} every ${this.quota.windowSeconds} seconds per caller; ${what}; retry in ${retryAfter} seconds`,
      retryAfter,
      this.quota,
      { remaining: Math.max(0, known.remaining), resetSeconds: retryAfter },
    ));
  }

  /** Charges `cost` to the caller; the budget left and when it resets. A failing store counts nothing (docs/rate-limits.md). */
  async charge(key: string, cost: number): Promise<BudgetState | null> {
    let res: RateLimiterRes;
    try {
      res = cost > 0 ? await this.quota.limiter.consume(key, cost) : await this.quota.limiter.reward(key, 0);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) return null;
      res = err;
    }
    const remaining = Math.max(0, res.remainingPoints);
    this.known.set(key, { remaining, resetAt: Date.now() + res.msBeforeNext });
    return { remaining, resetSeconds: seconds(res.msBeforeNext) };
  }
}

/** Where the cost plugin reads the caller and leaves the outcome (charged, or refused), on the request's GraphQL context. */
export interface CostContext extends BaseContext {
  cost: { key: string; outcome: OperationCost | null; refused: BudgetState | null };
}

/**
 * Costs each operation once Apollo knows it: over the limit, COST_LIMIT (400); more than the caller's budget has
 * left, 429. Once it answered, charges the actual cost and writes both in `extensions.cost` (the RateLimit headers
 * are the HTTP layer's: src/platform/graphql/server.ts).
 */
export function costPlugin<T extends CostContext>(budget: CostBudget): ApolloServerPlugin<T> {
  return {
    async requestDidStart() {
      let requested: number | null = null;
      return {
        async didResolveOperation({ schema, document, operationName, request, contextValue }) {
          try {
            requested = requestedCost(schema, document, operationName ?? undefined, request.variables);
          } catch (err) {
            // The field's own error, as it would have answered it, but before anything runs: a 400 like a variable's.
            if (!(err instanceof ValidationError)) throw err;
            throw new GraphQLError(err.message, { originalError: err, extensions: { http: { status: 400, headers: new HeaderMap() } } });
          }
          if (requested === null) return;
          // Thrown here, Apollo answers with the HTTP status the error carries (500 without one).
          if (requested > GRAPHQL_LIMITS.maxCost) {
            const refusal = limitError('COST_LIMIT', `The operation's requested cost is ${requested}, over the limit of ${GRAPHQL_LIMITS.maxCost}: ask for fewer fields or smaller pages`);
            throw new GraphQLError(refusal.message, { originalError: refusal.originalError, extensions: { http: { status: 400, headers: new HeaderMap() } } });
          }
          try {
            budget.check(contextValue.cost.key, requested);
          } catch (err) {
            if (!(err instanceof BudgetRefusal)) throw err;
            contextValue.cost.refused = err.budget;
            const headers = new HeaderMap([['retry-after', String(err.retryAfterSeconds)]]);
            throw new GraphQLError(err.message, { originalError: err, extensions: { http: { status: 429, headers } } });
          }
        },
        async willSendResponse({ response, contextValue }) {
          if (requested === null || response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          if (!('data' in result)) return;
          const actual = answerCost(result.data);
          const charged = await budget.charge(contextValue.cost.key, actual);
          if (!charged) return;
          contextValue.cost.outcome = { requested, actual, ...charged };
          result.extensions = { ...result.extensions, cost: { requested, actual, limit: GRAPHQL_LIMITS.maxCost } };
        },
      };
    },
  };
}
