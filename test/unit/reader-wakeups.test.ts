import { ReaderWakeups } from '../../src/watch/reader-wakeups.activity';

test('a registration wakes the readers of its watcher only, and a reader that stopped listening hears nothing', () => {
  const wakeups = new ReaderWakeups();
  const heard: string[] = [];
  const stopA = wakeups.listen('watcher-a', () => heard.push('a1'));
  wakeups.listen('watcher-a', () => heard.push('a2'));
  wakeups.listen('watcher-b', () => heard.push('b'));
  wakeups.wake('watcher-a');
  expect(heard).toEqual(['a1', 'a2']);
  stopA();
  wakeups.wake('watcher-a');
  wakeups.wake('watcher-c');
  expect(heard).toEqual(['a1', 'a2', 'a2']);
});
