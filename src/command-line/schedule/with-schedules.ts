import { FollowUpSchedules } from '../../index';
import type { FollowUpClient } from '../../index';
import type { CliIo } from '../io';

/** Runs `work` with a schedules client on the connection `io.connect()` makes, and always closes that connection. */
export async function withSchedules<T>(
  io: CliIo,
  work: (schedules: FollowUpSchedules, followUps: FollowUpClient) => Promise<T>,
): Promise<T> {
  const followUps = await io.connect();
  try {
    return await work(FollowUpSchedules.from(followUps), followUps);
  } finally {
    await followUps.close();
  }
}
