import { ApplicationFailure } from '@temporalio/common';

/** The ApplicationFailure a call must reject with; anything else (or success) fails the test. */
export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApplicationFailure) return error;
    throw error;
  }
  throw new Error('expected the call to fail with an ApplicationFailure');
}
