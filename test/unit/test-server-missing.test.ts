/**
 * `startTestStack({ timeSkipping: true })` on a machine where the SDK cannot download its test server (no access to
 * temporal.download, as here): the error says how to install it otherwise and keeps the SDK's reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testServerMissing } from '../../src/temporal-cli';

test("the error names the installer that ships in the package, the variable, and the SDK's reason", () => {
  const reason = new Error('failed to download ephemeral server executable: dns error');
  const error = testServerMissing(reason);
  expect(error.message).toContain('(failed to download ephemeral server executable: dns error)');
  expect(error.message).toContain('bash node_modules/agent-followup/scripts/install/install-temporal-test-server.sh');
  expect(error.message).toContain('TEMPORAL_TEST_SERVER_PATH');
  expect(error.cause).toBe(reason);
  // What it names is in the package: the file exists, and package.json ships it.
  const root = join(__dirname, '..', '..');
  expect(existsSync(join(root, 'scripts/install/install-temporal-test-server.sh'))).toBe(true);
  const { files } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
  expect(files).toContain('scripts/install/install-temporal-test-server.sh');
});
