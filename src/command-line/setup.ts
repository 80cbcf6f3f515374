/** `agent-followup setup`: registers what a namespace needs before the first worker runs. Safe to run again. */
import type { Command } from 'commander';
import { NamespaceSetupError, setUpNamespace } from '../index';
import { ExitCode, type CliContext, type CliIo } from './io';

export function registerSetup(program: Command, ctx: CliContext): void {
  program
    .command('setup')
    .summary(
      "register the follow-up's search attributes on the namespace (once per namespace; running it again changes nothing)",
    )
    .description(
      'Registers AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink and AgentFollowUpOutcome (Keyword) on the namespace that TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE select (or a TEMPORAL_PROFILE). Those already there are left as they are.',
    )
    .action(async () => {
      ctx.exitCode = await setup(ctx.io);
    });
}

async function setup(io: CliIo): Promise<number> {
  const followUps = await io.connect();
  const namespace = followUps.client.options.namespace;
  try {
    const { added, present } = await setUpNamespace(followUps.client.connection.operatorService, namespace);
    const parts = [
      ...(added.length > 0 ? [`registered ${added.join(', ')}`] : []),
      ...(present.length > 0 ? [`already there: ${present.join(', ')}`] : []),
    ];
    io.out(`Namespace '${namespace}' is ready for agent-followup (${parts.join('; ')}).\n`);
    return ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof NamespaceSetupError)) throw error;
    io.err(`agent-followup: ${error.message}\n`);
    return ExitCode.BadInput;
  } finally {
    await followUps.close();
  }
}
