import { DEMO_PASSWORD } from '../../src/seed/demo-data';
import { request } from './http';

/** A real access token from the development identity provider of a test server. */
export async function tokenFor(baseUrl: string, email: string, scope = 'svc email profile'): Promise<string> {
  const res = await tokenRequest(baseUrl, { grant_type: 'password', client_id: 'svc-api', username: email, password: DEMO_PASSWORD, scope });
  if (res.status !== 200) throw new Error(`token for ${email}: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** POST /auth/token with form parameters. */
export function tokenRequest(baseUrl: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return request(baseUrl, 'POST', '/auth/token', {
    raw: new URLSearchParams(form).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
  });
}
