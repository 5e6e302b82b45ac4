import { randomBytes } from 'node:crypto';

/** The machine's Redis (every machine of this project and CI runs one), the change bus of tests that need no fault of it. */
export const MACHINE_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of a test's own on the machine's Redis (CHANGE_BUS_KEY_PREFIX), and its removal at the end. */
export function busKeys(label: string): { prefix: string; drop(): Promise<void> } {
  const prefix = `test-${label}-${randomBytes(4).toString('hex')}`;
  return {
    prefix,
    async drop() {
      const { Redis } = await import('ioredis');
      const redis = new Redis(MACHINE_REDIS_URL);
      try {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
  };
}
