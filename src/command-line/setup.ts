/** `agent-followup setup`: registers what a namespace needs before the first worker runs. Safe to run again. */
import type { Command } from 'commander';
import type { z } from 'zod';
import { NamespaceSetupError, setUpNamespace } from '../index';
import { CommandRefusal, examplesOf, ExitCode, type CliContext, type CliIo } from './io';
import type { SetupReportSchema } from './json-output';

export function registerSetup(program: Command, ctx: CliContext): void {
  program
    .command('setup')
    .summary(
      "register the follow-up's search attributes on the namespace (once per namespace; running it again changes nothing)",
    )
    .description(
      'Registers AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink and AgentFollowUpOutcome (Keyword) on the namespace that TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE select (or --address, --namespace, a profile). Those already there are left as they are.',
    )
    .option('--json', 'print one JSON object instead of text')
    .addHelpText(
      'after',
      examplesOf(['agent-followup setup', 'agent-followup --address temporal.internal:7233 --namespace prod setup']),
    )
    .action(async (options: { json?: boolean }) => {
      ctx.exitCode = await setup(Boolean(options.json), ctx.io);
    });
}

async function setup(json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  const namespace = followUps.client.options.namespace;
  try {
    const { added, present } = await setUpNamespace(followUps.client.connection.operatorService, namespace);
    if (json) {
      const report: z.infer<typeof SetupReportSchema> = { namespace, added, present };
      io.out(`${JSON.stringify(report)}\n`);
      return ExitCode.Ok;
    }
    const parts = [
      ...(added.length > 0 ? [`registered ${added.join(', ')}`] : []),
      ...(present.length > 0 ? [`already there: ${present.join(', ')}`] : []),
    ];
    io.out(`Namespace '${namespace}' is ready for agent-followup (${parts.join('; ')}).\n`);
    return ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof NamespaceSetupError)) throw error;
    throw new CommandRefusal('NamespaceNotReady', error.message, ExitCode.BadInput);
  } finally {
    await followUps.close();
  }
}
