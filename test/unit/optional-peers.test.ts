import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MissingPeerError, requirePeers, TEMPORAL_SDK_VERSION } from '../../src/peers/optional-peers';

const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

test('the worker and testing SDK packages are optional peers at the version of the client the package depends on', () => {
  expect(manifest.dependencies['@temporalio/worker']).toBeUndefined();
  expect(manifest.dependencies['@temporalio/testing']).toBeUndefined();
  for (const name of ['@temporalio/worker', '@temporalio/testing']) {
    expect(manifest.peerDependencies[name]).toBe(TEMPORAL_SDK_VERSION);
    expect(manifest.peerDependenciesMeta[name]).toEqual({ optional: true });
  }
  expect(manifest.dependencies['@temporalio/client']).toBe(TEMPORAL_SDK_VERSION);
});

test('a missing peer is named with the exact install command; present peers pass', () => {
  const present = new Set(['@temporalio/worker']);
  expect(() =>
    requirePeers('agent-followup/worker', ['@temporalio/worker'], (name) => present.has(name)),
  ).not.toThrow();
  let error: unknown;
  try {
    requirePeers('agent-followup/testing', ['@temporalio/testing', '@temporalio/worker'], (name) => present.has(name));
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(MissingPeerError);
  expect((error as MissingPeerError).missing).toEqual(['@temporalio/testing']);
  expect((error as MissingPeerError).message).toBe(
    'agent-followup/testing needs @temporalio/testing, which is not installed. Install it beside agent-followup: ' +
      `npm install @temporalio/testing@${TEMPORAL_SDK_VERSION}. ` +
      '(A service that only starts and follows follow-ups does not need it.)',
  );
});

test('in this repository both peers resolve, so the entries load', () => {
  expect(() => requirePeers('agent-followup/testing', ['@temporalio/testing', '@temporalio/worker'])).not.toThrow();
});
