import { camelToSnake } from '../services/validation';
import { formatTimestamp } from '../services/time';

/** Service views are camelCase with Date timestamps; REST bodies are snake_case with ISO strings. */
export function toRest(value: unknown): unknown {
  if (value instanceof Date) return formatTimestamp(value);
  if (Array.isArray(value)) return value.map(toRest);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[camelToSnake(k)] = toRest(v);
  return out;
}
