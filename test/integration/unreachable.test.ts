/**
 * Temporal out of reach is a typed error that says what to check, whether it was never there or went away after the
 * client connected: TemporalUnreachableError, never a raw gRPC status. Nothing is started either way.
 */
import { FollowUpClient, TemporalUnreachableError } from '../../src/client';
import { startTestStack } from '../../src/testing';

test('no server at the address: fromEnvironment says where it looked and what to check', async () => {
  const error = (await FollowUpClient.fromEnvironment({ TEMPORAL_ADDRESS: '127.0.0.1:1' }).catch(
    (caught: unknown) => caught,
  )) as Error;
  expect(error).toBeInstanceOf(TemporalUnreachableError);
  expect(error.message).toContain("Cannot reach Temporal at 127.0.0.1:1 (namespace 'default')");
  expect(error.message).toContain('Is the server running there?');
}, 60_000);

test('a server that went away after the client connected: start() throws TemporalUnreachableError', async () => {
  const stack = await startTestStack();
  const followUps = await FollowUpClient.fromEnvironment({
    TEMPORAL_ADDRESS: stack.address,
    TEMPORAL_TASK_QUEUE: stack.taskQueue,
  });
  try {
    await stack.close();
    const error = (await followUps
      .start({ projectId: 'p', jobId: 'j', prompt: 'Anyone there?' })
      .catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(TemporalUnreachableError);
    expect(error.message).toContain('Temporal stopped answering');
    expect(error.message).toContain('Nothing was started');
  } finally {
    await followUps.close();
  }
}, 120_000);
