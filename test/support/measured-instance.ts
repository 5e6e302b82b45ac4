/**
 * The service (src/server.ts) for tests that measure what it retains: started with `NODE_OPTIONS=--expose-gc`; over
 * the IPC channel, `memory` collects the garbage and answers process.memoryUsage(), so that a figure is what is held,
 * not what V8 has not collected yet.
 */
process.on('message', (message) => {
  if (message !== 'memory') return;
  (global as { gc?: () => void }).gc?.();
  process.send!(process.memoryUsage());
});

// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../../src/server');
