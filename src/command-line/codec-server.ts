/** `agent-followup codec-server`: the Web UI's and the Temporal CLI's way to see encrypted payloads in clear. */
import type { Command } from 'commander';
import { payloadCodecFromEnvironment, PAYLOAD_KEYS_VARIABLE, startCodecServer } from '../index';
import { ExitCode, UsageError, type CliContext, examplesOf } from './io';

/** The token variable: a secret, so never an option (it would show in `ps` and shell history). */
const TOKEN_VARIABLE = 'AGENT_CODEC_SERVER_TOKEN';

export function registerCodecServer(program: Command, ctx: CliContext): void {
  program
    .command('codec-server')
    .summary(`serve the ${PAYLOAD_KEYS_VARIABLE} codec to the Web UI and the Temporal CLI until Ctrl-C`)
    .option('--port <port>', 'the port to listen on (0: a free one)', '8888')
    .option(
      '--host <address>',
      'the address to listen on; other than loopback needs AGENT_CODEC_SERVER_TOKEN',
      '127.0.0.1',
    )
    .option(
      '--web-origin <origin...>',
      "the Web UI's origin, which a browser may call from (e.g. http://localhost:8233)",
      [] as string[],
    )
    .addHelpText('after', examplesOf(['AGENT_PAYLOAD_KEYS=... agent-followup codec-server --port 8081']))
    .action(async (options: { port: string; host: string; webOrigin: string[] }) => {
      const port = Number(options.port);
      if (!/^\d+$/.test(options.port) || port > 65_535) throw new UsageError('--port must be a port number (0-65535)');
      const codec = payloadCodecFromEnvironment(ctx.io.env);
      if (!codec) {
        throw new UsageError(
          `${PAYLOAD_KEYS_VARIABLE} is not set: the codec server needs the same keys as the workers (id:base64key,...)`,
        );
      }
      const token = ctx.io.env[TOKEN_VARIABLE] || undefined;
      let server;
      try {
        server = await startCodecServer({
          codec,
          port,
          host: options.host,
          allowedOrigins: options.webOrigin,
          ...(token !== undefined ? { token } : {}),
        });
      } catch (error) {
        throw new UsageError(`cannot serve the codec: ${error instanceof Error ? error.message : String(error)}`);
      }
      ctx.io.out(
        `Codec server on ${server.url} (key '${codec.currentKeyId}' encrypts)` +
          `${token !== undefined ? ', requests need the token' : ''}. Web UI: its data encoder settings (the glasses ` +
          `icon at the top right) > ${server.url}, or a dev server started with --ui-codec-endpoint ${server.url}` +
          `; Temporal CLI: --codec-endpoint ${server.url}${token !== undefined ? ` --codec-auth "Bearer $${TOKEN_VARIABLE}"` : ''}. ` +
          'Ctrl-C stops it.\n',
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      ctx.exitCode = ExitCode.Ok;
    });
}
