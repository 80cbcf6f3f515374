import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';

/**
 * The SDK's MockActivityEnvironment with a logger at ERROR: the activities' expected warnings (a failed read tried
 * again, a refused signal) would otherwise fill the unit tests' output, which should show only their results.
 */
export function quietActivityEnvironment(
  info?: ConstructorParameters<typeof MockActivityEnvironment>[0],
): MockActivityEnvironment {
  return new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
}
