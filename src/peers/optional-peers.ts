/**
 * `@temporalio/worker` (with its native core bridge and swc) and `@temporalio/testing` are optional peers: a service
 * that only starts and follows follow-ups installs neither. The entries that need them check first, so a missing peer
 * is one sentence that says what to install rather than a resolution error from deep inside the SDK.
 */

/** The SDK version this package is built and tested with; peers must match it (package.json `peerDependencies`). */
export const TEMPORAL_SDK_VERSION = '1.24.0';

export class MissingPeerError extends Error {
  override readonly name = 'MissingPeerError';
  constructor(
    readonly entry: string,
    readonly missing: readonly string[],
  ) {
    const install = missing.map((name) => `${name}@${TEMPORAL_SDK_VERSION}`).join(' ');
    super(
      `${entry} needs ${missing.join(' and ')}, which ${missing.length > 1 ? 'are' : 'is'} not installed. ` +
        `Install ${missing.length > 1 ? 'them' : 'it'} beside agent-followup: npm install ${install}. ` +
        `(A service that only starts and follows follow-ups does not need ${missing.length > 1 ? 'them' : 'it'}.)`,
    );
  }
}

function installed(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Throws MissingPeerError naming every peer of `peers` that cannot be resolved from this package. */
export function requirePeers(entry: string, peers: readonly string[], isInstalled = installed): void {
  const missing = peers.filter((name) => !isInstalled(name));
  if (missing.length > 0) throw new MissingPeerError(entry, missing);
}
