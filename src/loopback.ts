/**
 * Where plain http:// may go: this machine only. One rule for the agent API's base URL, the codec server's address and
 * callback URLs, so a secret or a signed body never crosses a network in clear text by a rule's oversight.
 */
import { isIP } from 'node:net';

/**
 * This machine by a name that cannot resolve elsewhere ("127.evil.example" is a DNS name, not loopback): a URL's
 * hostname (`[::1]`) or a listen address (`::1`).
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}
