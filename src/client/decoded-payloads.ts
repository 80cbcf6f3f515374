/**
 * Payloads read from what Temporal returns raw (a description's pending activities, a history's events), which the
 * SDK does not decode for us: the client's codecs undone (last first), then its payload converter. Client-side only.
 */
import type { LoadedDataConverter, Payload } from '@temporalio/common';

export async function decodedPayloads(
  converter: LoadedDataConverter,
  payloads: Payload[] | null | undefined,
): Promise<unknown[]> {
  if (!payloads?.length) return [];
  let plain = payloads;
  for (const codec of [...converter.payloadCodecs].reverse()) plain = await codec.decode(plain);
  return plain.map((payload) => converter.payloadConverter.fromPayload(payload));
}
