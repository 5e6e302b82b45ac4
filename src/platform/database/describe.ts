/** How a database and its errors are named in log lines and refusals. */

/** host:port/database of a URL, for messages (never the password). */
export function describeDatabase(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** One line: the error's code (unless its message already says it) and the message's first line. */
export const describeError = (err: unknown): string => {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0] : '';
  const code = typeof e?.code === 'string' && !message.includes(e.code) ? e.code : '';
  return [code, message].filter(Boolean).join(' ') || String(err);
};
