/** Message definitions as plain objects: each workflow's messages.ts names its own with these. */
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';

/**
 * The plain objects the SDK's `defineSignal` and `defineQuery` return (a type and a name), made here so that the
 * client, which shares these definitions with the workflows, does not load the workflow SDK to get them.
 */
export function signalNamed<Args extends unknown[]>(name: string): SignalDefinition<Args> {
  return { type: 'signal', name } as SignalDefinition<Args>;
}

export function updateNamed<Result, Args extends unknown[]>(name: string): UpdateDefinition<Result, Args> {
  return { type: 'update', name } as UpdateDefinition<Result, Args>;
}

export function queryNamed<Result, Args extends unknown[] = []>(name: string): QueryDefinition<Result, Args> {
  return { type: 'query', name } as QueryDefinition<Result, Args>;
}
