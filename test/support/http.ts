import http, { type IncomingHttpHeaders } from 'node:http';
import { assertDocumentedResponse } from './openapi-responses';

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

/**
 * One HTTP request against a test server; JSON bodies are parsed. An answer of a documented REST operation
 * must match openapi.json (test/support/openapi-responses.ts), or the request throws.
 */
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
  assertDocumentedResponse(method, baseUrl + path, res.status, res.headers, parsed);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes on the wire, not decoded (a compressed body stays compressed). */
  body: Buffer;
}

/**
 * One request through node:http, with exactly the headers given: unlike fetch(), nothing is added (fetch
 * sends Accept-Encoding, and Cache-Control: no-cache with any If-None-Match) and nothing is decompressed.
 */
export function rawRequest(url: string, opts: { method?: string; headers?: Record<string, string>; token?: string; body?: string | Buffer } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(15000, () => req.destroy(new Error(`no answer from ${url} within 15 s`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}
