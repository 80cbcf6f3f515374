import { KeyedGate } from '../../src/coordinator/keyed-gate.activity';

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

test('at most N calls per key run at once, the rest in arrival order; other keys are not held back', async () => {
  const gate = new KeyedGate(2);
  const far = Date.now() + 60_000;
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const call = (key: string, name: string) =>
    gate.run(key, far, async () => {
      started.push(name);
      const { promise, resolve } = deferred();
      releases.set(name, resolve);
      await promise;
      return name;
    });
  const calls = [call('p', 'a'), call('p', 'b'), call('p', 'c'), call('p', 'd'), call('q', 'x')];
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual(['a', 'b', 'x']);
  releases.get('b')?.();
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toEqual(['a', 'b', 'x', 'c']);
  for (const name of ['a', 'c', 'x']) releases.get(name)?.();
  await new Promise((resolve) => setImmediate(resolve));
  releases.get('d')?.();
  expect(await Promise.all(calls)).toEqual([{ done: 'a' }, { done: 'b' }, { done: 'c' }, { done: 'd' }, { done: 'x' }]);
});

test('a call that cannot get a place before its deadline gives up without running', async () => {
  const gate = new KeyedGate(1);
  const { promise, resolve } = deferred();
  const first = gate.run('p', Date.now() + 60_000, () => promise);
  let ran = false;
  const second = await gate.run('p', Date.now() + 20, async () => {
    ran = true;
  });
  expect(second).toBe('timedOut');
  expect(ran).toBe(false);
  resolve();
  await first;
  expect(await gate.run('p', Date.now() + 20, async () => 'free again')).toEqual({ done: 'free again' });
});
