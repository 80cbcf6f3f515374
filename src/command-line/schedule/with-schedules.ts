import { FollowUpSchedules } from '../../index';
import type { FollowUpClient } from '../../index';
import type { z } from 'zod';
import type { CliIo } from '../io';
import type { ScheduleActionSchema } from '../json-output';

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

/** What pause, unpause, trigger and delete print under --json. */
export function printAction(io: CliIo, report: z.infer<typeof ScheduleActionSchema>): void {
  io.out(`${JSON.stringify(report)}\n`);
}
