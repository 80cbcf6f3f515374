import { getEventListeners } from 'node:events';
import { boundedSignal, sleepUnlessAborted } from '../../src/agent-api/abort-signals';

describe('boundedSignal', () => {
  test('aborts with a TimeoutError once the timeout passes, and says it timed out', async () => {
    const bounded = boundedSignal(undefined, 5);
    await new Promise((resolve) => bounded.signal.addEventListener('abort', resolve));
    expect(bounded.timedOut()).toBe(true);
    expect((bounded.signal.reason as DOMException).name).toBe('TimeoutError');
    bounded.release();
  });

  test("aborts with the outer signal's own reason, and not as a timeout", () => {
    const outer = new AbortController();
    const bounded = boundedSignal(outer.signal, 60_000);
    const reason = new Error('cancelled');
    outer.abort(reason);
    expect(bounded.signal.aborted).toBe(true);
    expect(bounded.signal.reason).toBe(reason);
    expect(bounded.timedOut()).toBe(false);
    bounded.release();
  });

  test('is aborted at once when the outer signal already is', () => {
    const outer = new AbortController();
    outer.abort(new Error('before'));
    const bounded = boundedSignal(outer.signal, 60_000);
    expect(bounded.signal.aborted).toBe(true);
    bounded.release();
  });

  test('release detaches it from the outer signal, and the timeout no longer fires', async () => {
    const outer = new AbortController();
    const bounded = boundedSignal(outer.signal, 5);
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(1);
    bounded.release();
    expect(getEventListeners(outer.signal, 'abort')).toHaveLength(0);
    await sleepUnlessAborted(20, []);
    expect(bounded.signal.aborted).toBe(false);
  });
});

describe('sleepUnlessAborted', () => {
  test('sleeps the whole time when nothing aborts, and leaves no listener behind', async () => {
    const first = new AbortController();
    const second = new AbortController();
    let woke = false;
    const sleeping = sleepUnlessAborted(20, [first.signal, second.signal]).then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    await sleeping;
    expect(getEventListeners(first.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(0);
  });

  test('wakes as soon as any signal aborts, and leaves no listener on the others', async () => {
    const first = new AbortController();
    const second = new AbortController();
    const sleeping = sleepUnlessAborted(60_000, [first.signal, second.signal]);
    second.abort();
    await sleeping;
    expect(getEventListeners(first.signal, 'abort')).toHaveLength(0);
  });

  test('returns at once when a signal is already aborted', async () => {
    const stopped = new AbortController();
    stopped.abort();
    await sleepUnlessAborted(60_000, [stopped.signal]);
    expect(getEventListeners(stopped.signal, 'abort')).toHaveLength(0);
  });
});
