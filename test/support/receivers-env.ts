/**
 * What every instance a test starts is configured with, in the test's process (app.ts) or as a process of its own
 * (instance-process.ts): the tests' webhook receivers (webhook-receiver.ts) listen on this machine, which
 * WEBHOOK_ALLOWED_NETWORKS refuses unless it names it (docs/webhooks.md). A test of the default sets it empty.
 */
export const RECEIVERS_ON_THIS_MACHINE: Record<string, string> = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128' };
