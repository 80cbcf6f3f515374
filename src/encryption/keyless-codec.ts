/**
 * What a client without keys does with an encrypted payload: says so. Without a codec the SDK's converter fails with
 * "Unknown encoding: binary/encrypted"; this codec, set where no AGENT_PAYLOAD_KEYS is (`FollowUpClient.fromEnvironment`,
 * so the CLI too), names the key the payload was written with and how to read it. Payloads in clear pass as they are.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadDecryptionError } from './aes-gcm-codec';

const decoder = new TextDecoder();

export class KeylessPayloadCodec implements PayloadCodec {
  encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads);
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    for (const payload of payloads) {
      const encoding = payload.metadata?.encoding;
      if (encoding === undefined || encoding === null || decoder.decode(encoding) !== ENCRYPTED_ENCODING) continue;
      const keyId = payload.metadata?.[KEY_ID_METADATA];
      const named = keyId ? ` with key '${decoder.decode(keyId)}'` : '';
      return Promise.reject(
        new PayloadDecryptionError(
          `this follow-up's payloads are encrypted${named}, and this process has no AGENT_PAYLOAD_KEYS: set it as the ` +
            'workers have it (at least that key) to read them (docs/ENCRYPTION.md); the Web UI reads them through ' +
            '`agent-followup codec-server`',
        ),
      );
    }
    return Promise.resolve(payloads);
  }
}
