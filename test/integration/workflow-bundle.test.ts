/**
 * Every cached workflow evaluates its own copy of the modules in the workflow bundle (reuseV8Context), so what the
 * workflow imports is paid for once per follow-up in flight. This keeps the bundle to the SDK and our pure modules.
 */
import { readFileSync } from 'node:fs';

function bundledModules(): string[] {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!codePath) throw new Error('run with `npm test` (the jest globalSetup bundles the workflows)');
  const code = readFileSync(codePath, 'utf8');
  return [...code.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((match) => match[1] as string);
}

test('the workflow bundle holds only the Temporal SDK, its small helpers and our own workflow-safe modules', () => {
  const packages = new Set(
    bundledModules()
      .filter((path) => path.includes('node_modules/'))
      .map((path) => {
        const [first, second] = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length).split('/');
        return first?.startsWith('@') ? `${first}/${second}` : (first as string);
      }),
  );
  // ipaddr.js: the workflow's own input check refuses a notify.url naming an internal address (issue 73), so a raw
  // start is refused before anything runs; pure JavaScript, no Node built-ins (about 100 KiB of the bundle).
  expect([...packages].sort()).toEqual([
    '@temporalio/common',
    '@temporalio/workflow',
    'ipaddr.js',
    'long',
    'ms',
    'nexus-rpc',
  ]);
});

test('no zod, HTTP client or activity code reaches the workflow bundle', () => {
  const ours = bundledModules().filter((path) => !path.includes('node_modules/') && path.startsWith('./'));
  expect(ours.length).toBeGreaterThan(0);
  for (const path of ours) {
    // A wing's file runs outside the sandbox when its name says so (*.activity.ts, *.worker.ts, *.client.ts).
    expect(path).toMatch(/^\.\/src\/(workflows|kernel|coordinator|watch)\//);
    expect(path).not.toMatch(/\.(activity|worker|client)\.ts$/);
  }
});
