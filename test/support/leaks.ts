/**
 * What no answer may show (decisions.md section 2): stack traces, SQL or PostgreSQL's messages, a
 * library's own wording, paths of the installation. Each pattern is named so that a failure says which.
 */
const LEAKS: ReadonlyArray<[string, RegExp]> = [
  ['stack frame', /\bat (?:async )?[\w$.<>[\]]+ \(|\n\s+at \S|stacktrace/],
  ['filesystem path', /node_modules|\/(?:work|home|usr|tmp|root|opt|srv|var|app)\/[\w.-]+|[\w-]+\.(?:ts|js|mjs|cjs):\d+|file:\/\//],
  ['SQL', /\b(?:select|insert into|update|delete from) "|syntax error at or near|invalid input syntax|violates [\w -]*constraint|duplicate key value|relation "|column "|out of range for type|value too long for type|invalid byte sequence|unterminated quoted|current transaction is aborted|\bpg_|postgres/i],
  ['library message', /TypeError|ReferenceError|RangeError|SyntaxError|Cannot read propert|is not a function|is not iterable|Unexpected token|Unexpected end of JSON|in JSON at position|incorrect header check|unexpected end of file|Decompression failed|invalid (?:stored block|distance|code lengths)|Unsupported Content-Encoding|specified encoding unsupported|request size did not match|stream is not readable|MikroORM|Knex|knex|class-validator|an unknown value was passed|ECONN|ENOENT|EACCES|EISDIR|Z_DATA_ERROR|Z_BUF_ERROR|ERR_[A-Z_]+|undefined is not|Maximum call stack|[Aa]pollo|graphql-armor|DataLoader|Context creation failed|EPIPE|ETIMEDOUT/],
];

/** What a successful answer, which echoes what the caller sent, must not show either. */
export const INTERNALS = ['stack frame', 'filesystem path'];

/** The first leak of these kinds a response text shows, as `kind: excerpt`, or null. */
export function leakIn(text: string, kinds: readonly string[] = LEAKS.map(([kind]) => kind)): string | null {
  for (const [kind, pattern] of LEAKS.filter(([k]) => kinds.includes(k))) {
    const m = pattern.exec(text);
    if (m) return `${kind}: ${text.slice(Math.max(0, m.index - 40), m.index + 60)}`;
  }
  return null;
}
