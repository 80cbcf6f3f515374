import { AnswerInbox } from '../../src/watch/answer-inbox';

test('answers that come while no watch is open are held, in order, for the next watch to open', () => {
  const inbox = new AnswerInbox();
  inbox.deliver('early');
  inbox.deliver('second');
  const taken: unknown[] = [];
  inbox.open((answer) => taken.push(answer));
  inbox.deliver('while open');
  expect(taken).toEqual(['early', 'second', 'while open']);
  // Closed: held again, and the next watch, not the last, takes them.
  inbox.close();
  inbox.deliver('between');
  const next: unknown[] = [];
  inbox.open((answer) => next.push(answer));
  expect(taken).toEqual(['early', 'second', 'while open']);
  expect(next).toEqual(['between']);
});

test('a flood while no watch is open keeps only the latest twenty', () => {
  const inbox = new AnswerInbox();
  for (let n = 1; n <= 1_000; n += 1) inbox.deliver(n);
  const taken: unknown[] = [];
  inbox.open((answer) => taken.push(answer));
  expect(taken).toEqual(Array.from({ length: 20 }, (_, i) => 981 + i));
});
