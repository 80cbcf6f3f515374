/** `agent-followup schedule …`: one file per command. */
import type { Command } from 'commander';
import type { CliContext } from '../io';
import { registerCreate } from './create';
import { registerDelete } from './delete';
import { registerDescribe } from './describe';
import { registerList } from './list';
import { registerPauseAndUnpause } from './pause';
import { registerTrigger } from './trigger';

export function registerSchedule(program: Command, ctx: CliContext): void {
  const schedule = program
    .command('schedule')
    .summary('recurring follow-ups on Temporal Schedules (docs/SCHEDULES.md)')
    .helpCommand(false);
  registerCreate(schedule, ctx);
  registerList(schedule, ctx);
  registerDescribe(schedule, ctx);
  registerPauseAndUnpause(schedule, ctx);
  registerTrigger(schedule, ctx);
  registerDelete(schedule, ctx);
}
