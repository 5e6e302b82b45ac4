export interface HttpResponse<T = any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** A raw body sent as is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** Abort (and fail) when no answer came within this many milliseconds: a hang fails the test. */
  timeoutMs?: number;
}

/** One HTTP request against a test server; JSON bodies are parsed. */
export async function request(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let body: string | Buffer | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const signal = opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined;
  const res = await fetch(baseUrl + path, { method, headers, body, redirect: 'manual', signal });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}
