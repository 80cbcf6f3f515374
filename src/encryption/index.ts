/** Payload encryption: the codec, its one setting (AGENT_PAYLOAD_KEYS) and the codec server for the Web UI. */
export {
  AesGcmPayloadCodec,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  PayloadDecryptionError,
  type EncryptionKey,
} from './aes-gcm-codec';
export {
  dataConverterFromEnvironment,
  FAILURE_CONVERTER_PATH,
  parsePayloadKeys,
  payloadCodecFromEnvironment,
  PayloadKeysError,
  PAYLOAD_KEYS_VARIABLE,
} from './payload-keys';
export { startCodecServer, type CodecServer, type CodecServerOptions } from './codec-server';
