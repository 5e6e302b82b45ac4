import DataLoader from 'dataloader';
import type { GraphQLSchema } from 'graphql';
import { inSpan } from '../telemetry/tracing';

// The DataLoader machinery every module's loaders are made of (src/modules/loaders.ts makes them per request).

/** A batch in a span of its own (docs/tracing.md): its statements nest under it, it under the operation. */
function traced<V>(name: string, batch: (keys: readonly string[]) => Promise<Map<string, V>>) {
  return (keys: readonly string[]) => inSpan(`dataloader ${name}`, { 'dataloader.name': name, 'dataloader.keys': keys.length }, () => batch(keys));
}

/** A value, or the promise of it: what a field resolver may return. */
export type Now<V> = V | Promise<V>;

/** `f` of a value known now, without a promise; of a promised one, once it comes. */
export function mapNow<V, R>(value: Now<V>, f: (value: V) => R): Now<R> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * A loader from a batch function that answers a Map; missing keys resolve to `fallback`. `name` names its spans.
 * `loadNow` answers a value its batch already brought without a promise (a dashboard's templates ask their
 * project's trades and their siblings hundreds of times, once the projects' batch has answered).
 */
export function mapLoader<V>(name: string, batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V) {
  const run = traced(name, batch);
  const settled = new Map<string, V>();
  const loader = new DataLoader<string, V>(async (keys) => {
    const map = await run(keys);
    return keys.map((k) => {
      const value = map.get(k) ?? fallback;
      settled.set(k, value);
      return value;
    });
  });
  return {
    load: (key: string) => loader.load(key),
    loadMany: (keys: readonly string[]) => loader.loadMany(keys),
    loadNow: (key: string): Now<V> => (settled.has(key) ? settled.get(key)! : loader.load(key)),
    clearAll(): void {
      settled.clear();
      loader.clearAll();
    },
  };
}

/** A statement read ahead (`offer`), and its answer once it has come. */
interface Offered<V> {
  promise: Promise<Map<string, V>>;
  values: Map<string, V> | null;
}

/**
 * A loader whose values a parent level may read ahead: `offer(keys, values)` says that the values of those keys
 * are on their way (a statement already running, answering a Map); a batch waits for them instead of asking the
 * database again, and runs its own statement only for the keys nobody offered. Missing keys resolve to `fallback`.
 *
 * `absentMeansNone`: a key offered but absent from the offered answer has no value (a document without
 * versions). Otherwise an absent key is one the offered statement could not see (it started before the row
 * above it was committed: a contractor invited after the contractors' statement began, with a document the
 * documents' statement saw), and the loader's own statement reads it.
 */
export function readAheadLoader<V>(name: string, batch: (keys: readonly string[]) => Promise<Map<string, V>>, fallback: V, absentMeansNone = true) {
  const run = traced(name, batch);
  const offered = new Map<string, Offered<V>>();
  // Whether an offered answer settles `key`: its absence does only when absence means no value.
  const settles = (values: Map<string, V>, key: string) => absentMeansNone || values.has(key);
  const loader = new DataLoader<string, V | Error>(async (keys) => {
    // Where each key's value comes from, decided once: a key offered while this batch waits is answered by it.
    const from = keys.map((k) => offered.get(k));
    const sources = [...new Set(from.filter((o) => o !== undefined))];
    // Each source settles on its own: one statement's failure fails its own keys, not the others of the batch.
    const read = await Promise.allSettled(sources.map((o) => o.promise));
    const bySource = new Map(sources.map((o, i) => [o, read[i]]));
    const offeredAnswer = keys.map((k, i) => {
      const source = from[i] && bySource.get(from[i]);
      return source && (source.status === 'rejected' || settles(source.value, k)) ? source : undefined;
    });
    const own = keys.filter((_, i) => !offeredAnswer[i]);
    const [mine] = await Promise.allSettled([own.length ? run(own) : Promise.resolve(new Map<string, V>())]);
    return keys.map((k, i) => {
      const answer = offeredAnswer[i] ?? mine;
      if (answer.status === 'rejected') {
        // A failed read-ahead is not kept: a later load asks again.
        if (from[i] && offered.get(k) === from[i]) offered.delete(k);
        return answer.reason instanceof Error ? answer.reason : new Error(String(answer.reason));
      }
      return answer.value.get(k) ?? fallback;
    });
  });
  return {
    load: (key: string) => loader.load(key) as Promise<V>,
    /**
     * The value itself when the statement that read it ahead has answered, else the loader's promise. A
     * dashboard's thousands of documents resolve their versions and contractors this way without a promise
     * each (promises, and the executor's handling of them, were a good part of what such a query allocated).
     */
    loadNow(key: string): Now<V> {
      const values = offered.get(key)?.values;
      if (values && settles(values, key)) return values.get(key) ?? fallback;
      return loader.load(key) as Promise<V>;
    },
    offer(keys: Iterable<string>, values: Promise<Map<string, V>>): void {
      const source: Offered<V> = { promise: values, values: null };
      // Read ahead, perhaps never waited for (the request failed first): its failure must not go unhandled.
      values.then((m) => { source.values = m; }, () => undefined);
      for (const key of keys) if (!offered.has(key)) offered.set(key, source);
    },
    clearAll(): void {
      offered.clear();
      loader.clearAll();
    },
  };
}

/**
 * Loaders of figures that take an argument (the leveling's threshold): one loader per value asked in the
 * request, so that a query asking every project for one threshold batches them all in one statement.
 */
export function argumentLoader<V>(name: string, batch: (keys: readonly string[], argument: number) => Promise<Map<string, V>>) {
  const loaders = new Map<number, ReturnType<typeof mapLoader<V | null>>>();
  return {
    load(id: string, argument: number): Promise<V | null> {
      let loader = loaders.get(argument);
      if (!loader) {
        loader = mapLoader<V | null>(name, (ids) => batch(ids, argument), null);
        loaders.set(argument, loader);
      }
      return loader.load(id);
    },
    clearAll: () => loaders.clear(),
  };
}

/**
 * A mutation's payload shows the records as the mutation left them: once a mutation field has run, the request's
 * loaders forget what they loaded before it (an earlier mutation's payload of the same request). Mutation
 * fields run one after the other, each payload before the next mutation.
 */
export function freshLoadsAfterMutations(schema: GraphQLSchema): GraphQLSchema {
  for (const field of Object.values(schema.getMutationType()?.getFields() ?? {})) {
    const resolve = field.resolve;
    if (!resolve) continue;
    field.resolve = async (root, args, context: { loaders: Record<string, { clearAll(): void }> }, info) => {
      const result = await resolve(root, args, context, info);
      for (const loader of Object.values(context.loaders)) loader.clearAll();
      return result;
    };
  }
  return schema;
}
