import { readAheadLoader } from '../src/platform/graphql/dataloaders';

/** A batch function that records the keys it was asked for and answers `value:<key>` for each. */
function recordingBatch() {
  const asked: string[][] = [];
  const batch = async (keys: readonly string[]) => {
    asked.push([...keys]);
    return new Map(keys.map((k) => [k, `own:${k}`]));
  };
  return { asked, batch };
}

describe('readAheadLoader (a level read ahead by the level above, src/platform/graphql/dataloaders.ts)', () => {
  it('answers offered keys from the offered statement and asks its own batch only for the others', async () => {
    const { asked, batch } = recordingBatch();
    const loader = readAheadLoader<string | null>('test', batch, null);
    loader.offer(['a', 'b'], Promise.resolve(new Map([['a', 'ahead:a']])));
    expect(await Promise.all([loader.load('a'), loader.load('b'), loader.load('c')])).toEqual(['ahead:a', null, 'own:c']);
    expect(asked).toEqual([['c']]);
  });

  it('answers a key offered while its batch waits from what the batch decided at its start', async () => {
    let release!: (m: Map<string, string>) => void;
    const first = new Promise<Map<string, string>>((resolve) => { release = resolve; });
    const { batch } = recordingBatch();
    const loader = readAheadLoader<string | null>('test', batch, null);
    loader.offer(['a'], first);
    const loads = Promise.all([loader.load('a'), loader.load('b')]);
    await new Promise((resolve) => setImmediate(resolve));
    // 'b' is offered after the batch began: the batch's own answer stands.
    loader.offer(['b'], Promise.resolve(new Map([['b', 'late:b']])));
    release(new Map([['a', 'ahead:a']]));
    expect(await loads).toEqual(['ahead:a', 'own:b']);
  });

  it('gives the value itself, not a promise, once the offered statement has answered', async () => {
    const { asked, batch } = recordingBatch();
    const loader = readAheadLoader<string[] | string>('test', batch, []);
    const values = Promise.resolve(new Map([['a', ['1', '2']]]));
    loader.offer(['a', 'b'], values);
    expect(loader.loadNow('a')).toBeInstanceOf(Promise);
    await values;
    await new Promise((resolve) => setImmediate(resolve));
    expect(loader.loadNow('a')).toEqual(['1', '2']);
    expect(loader.loadNow('b')).toEqual([]);
    expect(await loader.loadNow('c')).toEqual('own:c');
    expect(asked).toEqual([['c']]);
  });

  it('fails the loads of the keys of a failed offer only, asks again later, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { asked, batch } = recordingBatch();
      const loader = readAheadLoader<string | null>('test', batch, null);
      loader.offer(['a'], Promise.reject(new Error('statement failed')));
      // A second offer that nobody ever loads: its failure must not surface either.
      readAheadLoader<string | null>('test', batch, null).offer(['x'], Promise.reject(new Error('never read')));
      // In one batch: the failed offer's key fails, the other key gets its own statement's answer.
      const [a, b] = await Promise.allSettled([loader.load('a'), loader.load('b')]);
      expect(a).toMatchObject({ status: 'rejected', reason: new Error('statement failed') });
      expect(b).toEqual({ status: 'fulfilled', value: 'own:b' });
      // DataLoader keeps the failure for this key; a fresh loader state (after a mutation) asks the database.
      loader.clearAll();
      expect(await loader.load('a')).toBe('own:a');
      expect(asked).toEqual([['b'], ['a']]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('reads with its own statement a key absent from the offered answer when absence proves nothing (a row committed after the statement began)', async () => {
    const { asked, batch } = recordingBatch();
    const loader = readAheadLoader<string | null>('test', batch, null, false);
    const values = Promise.resolve(new Map([['a', 'ahead:a']]));
    loader.offer(['a', 'late'], values);
    await values;
    await new Promise((resolve) => setImmediate(resolve));
    expect(loader.loadNow('a')).toBe('ahead:a');
    expect(await loader.loadNow('late')).toBe('own:late');
    expect(await Promise.all([loader.load('a'), loader.load('late')])).toEqual(['ahead:a', 'own:late']);
    expect(asked).toEqual([['late']]);
  });

  it('forgets what was offered when cleared (after a mutation)', async () => {
    const { asked, batch } = recordingBatch();
    const loader = readAheadLoader<string | null>('test', batch, null);
    loader.offer(['a'], Promise.resolve(new Map([['a', 'ahead:a']])));
    expect(await loader.load('a')).toBe('ahead:a');
    loader.clearAll();
    expect(await loader.load('a')).toBe('own:a');
    expect(asked).toEqual([['a']]);
  });
});
