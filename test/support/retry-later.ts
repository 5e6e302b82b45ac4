import type { HttpResponse } from './http';

/**
 * Asserts a 503 in the documented shape of its endpoint (decisions.md section 8): `Retry-After` in
 * seconds, REST `{code, message}` or GraphQL `errors[]` whose every code is SERVICE_UNAVAILABLE.
 */
export function expectServiceUnavailable(res: HttpResponse, surface: 'rest' | 'graphql'): void {
  expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
  if (surface === 'rest') {
    expect(res.body).toEqual({ code: 503, message: expect.any(String) });
  } else {
    expect(res.body.errors.length).toBeGreaterThan(0);
    for (const e of res.body.errors) expect(e.extensions.code).toBe('SERVICE_UNAVAILABLE');
  }
}

/** Never a 500 nor any other 5xx than 503: what a fault test may see besides 2xx. */
export function expectAnsweredTruthfully(res: HttpResponse): void {
  expect(res.status < 300 || res.status === 503 ? 'ok' : `${res.status} ${res.text}`).toBe('ok');
}
