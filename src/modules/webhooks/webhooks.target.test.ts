import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { loadConfig } from '../../platform/config';
import { createLogger } from '../../platform/logger';
import { WebhookSender } from './send';
import { TargetRefused, checkTarget, guardedLookup } from './target';

/**
 * Where a webhook may go (target.ts): judged at creation (checkTarget) and at every connection (guardedLookup, and the
 * sender's check of an IP literal). One describe per check. No database: the addresses are literals, `localhost`
 * (/etc/hosts) and a name under `.invalid` (never resolves), so that nothing depends on the Internet's DNS.
 */

const closed = loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOWED_NETWORKS: 'none' }).webhooks;
const loopbackAllowed = loadConfig({ NODE_ENV: 'test', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' }).webhooks;

/** An address in the text: IPv4 dotted, or IPv6 (two colons, or hex groups with colons). */
const ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}\b|::|\b[0-9a-f]{1,4}(:[0-9a-f]{1,4}){2,}\b/i;

const refusal = (url: string, config = closed) => checkTarget(url, config).then(() => null, (err: unknown) => err);

/** IPv4-compatible IPv6 (::/96, deprecated by RFC 4291): the IPv4 address is in its low 32 bits, in either notation. */
const IPV4_COMPATIBLE = ['http://[::7f00:1]/', 'http://[::127.0.0.1]/', 'http://[::a9fe:a9fe]/', 'http://[::169.254.169.254]/', 'http://[::10.0.0.1]/',
  'http://[::a00:1]/', 'http://[::8.8.8.8]/', 'http://[0:0:0:0:0:0:c0a8:101]/'];

/** Refused before ::/96 was: 6to4, Teredo, NAT64, IPv4-mapped and translated private, loopback, link-local, ULA, multicast. */
const REFUSED_BEFORE = ['http://[2002:7f00:1::]/', 'http://[2002:a9fe:a9fe::1]/', 'http://[2001::1]/', 'http://[2001:0:a9fe:a9fe::]/',
  'http://[64:ff9b::7f00:1]/', 'http://[64:ff9b::8.8.8.8]/', 'http://[64:ff9b:1::a00:1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:a9fe:a9fe]/',
  'http://[::ffff:0:a00:1]/', 'http://[::1]/', 'http://[::]/', 'http://[fe80::1]/', 'http://[fc00::1]/', 'http://[ff02::1]/', 'http://127.0.0.1/',
  'http://169.254.169.254/', 'http://10.0.0.1/', 'http://0.0.0.0/', 'http://100.64.0.1/'];

describe('checkTarget (createWebhook, updateWebhook)', () => {
  it('refuses a name resolving to a refused address and a name that does not resolve with one message, naming no address', async () => {
    const [resolves, unknown] = await Promise.all([refusal('http://localhost:8080/hook'), refusal('http://webhook-target.invalid/hook')]);
    expect(resolves).toBeInstanceOf(TargetRefused);
    expect(unknown).toBeInstanceOf(TargetRefused);
    expect((resolves as Error).message).toBe((unknown as Error).message);
    expect((resolves as Error).message).not.toMatch(ADDRESS);
    expect((unknown as Error).message).not.toMatch(/ENOTFOUND|EAI_AGAIN/);
    // A refused IP literal is told alike.
    expect(((await refusal('http://127.0.0.1/')) as Error).message).toBe((resolves as Error).message);
  });

  it('refuses IPv4-compatible IPv6 addresses (::/96), whatever IPv4 address they hold', async () => {
    const accepted: string[] = [];
    for (const url of IPV4_COMPATIBLE) if ((await refusal(url)) === null) accepted.push(url);
    expect(accepted).toEqual([]);
  });

  it('still refuses every special IPv6 and IPv4 range it refused before', async () => {
    const accepted: string[] = [];
    for (const url of REFUSED_BEFORE) if ((await refusal(url)) === null) accepted.push(url);
    expect(accepted).toEqual([]);
  });

  it('accepts public addresses, and WEBHOOK_ALLOWED_NETWORKS admits ::1 but no IPv4-compatible form of 127.0.0.0/8', async () => {
    for (const url of ['http://8.8.8.8/', 'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/']) expect([url, await refusal(url)]).toEqual([url, null]);
    expect(await refusal('http://[::1]:8080/', loopbackAllowed)).toBeNull();
    expect(await refusal('http://127.0.0.1:8080/', loopbackAllowed)).toBeNull();
    expect(await refusal('http://[::7f00:1]:8080/', loopbackAllowed)).toBeInstanceOf(TargetRefused);
  });
});

describe('guardedLookup (every connection to a name)', () => {
  afterEach(() => jest.restoreAllMocks());

  /** What the connection's lookup answers when the resolver gives `addresses` (as libuv writes them). */
  const lookedUp = (addresses: LookupAddress[]) => {
    jest.spyOn(dns, 'lookup').mockImplementation(((_host: string, _options: unknown, callback: (err: null, a: LookupAddress[]) => void) => {
      callback(null, addresses);
    }) as never);
    return new Promise<Error | null>((resolve) => guardedLookup(closed)('receiver.example', { all: true }, (err) => resolve(err)));
  };

  it('refuses a name resolving to an IPv4-compatible address, in the dotted form the resolver writes it in (::8.8.8.8)', async () => {
    for (const address of ['::8.8.8.8', '::10.0.0.1', '::a9fe:a9fe']) {
      expect([address, await lookedUp([{ address, family: 6 }])]).toEqual([address, expect.any(TargetRefused)]);
    }
    expect(await lookedUp([{ address: '2606:4700:4700::1111', family: 6 }])).toBeNull();
  });
});

describe('WebhookSender.send (each delivery attempt)', () => {
  const logged: Array<Record<string, unknown>> = [];
  let sender: WebhookSender;
  beforeAll(() => {
    sender = new WebhookSender(closed, createLogger({ logLevel: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) }));
  });
  afterAll(() => sender.close());

  it('records a refusal that names no resolved address (what the attempts list shows), and logs the address', async () => {
    const attempt = await sender.send('http://localhost:9/hook', { 'webhook-id': 'msg_1' }, '{}');
    expect(attempt).toMatchObject({ outcome: 'refused', status: null });
    expect(attempt.error).not.toMatch(ADDRESS);
    expect(attempt.error).not.toContain('localhost');
    expect(logged.map((l) => JSON.stringify(l)).join('\n')).toContain('127.0.0.1');
  });

  it('records a name that does not resolve as the same refusal as one resolving to a refused address: no outcome tells whether an internal name exists', async () => {
    const missing = await sender.send('http://nothing-here.invalid/hook', { 'webhook-id': 'msg_2' }, '{}');
    const internal = await sender.send('http://localhost:9/hook', { 'webhook-id': 'msg_3' }, '{}');
    expect([missing.outcome, missing.status, missing.error]).toEqual([internal.outcome, internal.status, internal.error]);
    expect(missing.outcome).toBe('refused');
    expect(logged.map((l) => JSON.stringify(l)).join('\n')).toContain('nothing-here.invalid');
  });

  it('refuses an IPv4-compatible IPv6 literal (::/96) without connecting', async () => {
    for (const url of ['http://[::7f00:1]:9/hook', 'http://[::a9fe:a9fe]/latest', 'http://[::10.0.0.1]/']) {
      expect([url, (await sender.send(url, {}, '{}')).outcome]).toEqual([url, 'refused']);
    }
  });
});
