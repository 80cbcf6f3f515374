/**
 * The worker's guard on where a URL may take it: a target's address is checked as the connection is made, so a name
 * that resolves (or re-resolves, DNS rebinding) to an internal address is refused with nothing sent. The classes are
 * kernel/address-class.ts's; what a deployment allows comes from its settings (AGENT_NOTIFY_ALLOW_*).
 */
import { promises as dns } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { Agent } from 'undici';
import {
  ADDRESS_CLASS_NAMES,
  addressInBlock,
  classifyAddress,
  isAddressBlock,
  isIpAddress,
  isMetadataHostName,
  normalHostName,
} from './kernel/address-class';

/** Which internal targets a deployment allows; everything else that is not public is refused. */
export interface AddressPolicy {
  /** This machine (127/8, ::1, `localhost`): the tests' receivers, a sidecar. */
  allowLoopback?: boolean;
  /** 10/8, 172.16/12, 192.168/16, fc00::/7 and 100.64/10. */
  allowPrivateNetworks?: boolean;
  /** Host names and CIDR blocks allowed whatever their class (never a metadata name, link-local, multicast or unspecified). */
  allowHosts?: readonly string[];
  /** The setting that allows more, named in refusals (e.g. AGENT_NOTIFY_ALLOW). */
  settingPrefix: string;
}

/** How a name becomes addresses; tests inject their own, so nothing off this machine is asked. */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The error a refused target raises inside a connection; `deliverNotification` and the API client look for its code. */
export class TargetRefusedError extends Error {
  override readonly name = 'TargetRefusedError';
  readonly code = 'ETARGETREFUSED';
}

/** Whether an error (or a cause in its chain: fetch wraps the connection's error) is a refused target. */
export function refusedTarget(error: unknown): TargetRefusedError | undefined {
  for (let each = error, depth = 0; each && depth < 5; depth++) {
    if ((each as { code?: unknown }).code === 'ETARGETREFUSED') return each as TargetRefusedError;
    each = (each as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Why a connection to `address` (reached by `host`) is refused, or undefined when it may go. */
export function addressRefusal(address: string, host: string, policy: AddressPolicy): string | undefined {
  if (isMetadataHostName(host)) return `${host} is a cloud metadata service's name, which no setting allows`;
  const kind = classifyAddress(address);
  if (kind === 'public') return undefined;
  const named = `${host}${host === address ? '' : ` (${address})`}`;
  const listed = (policy.allowHosts ?? []).some((entry) =>
    isAddressBlock(entry) ? addressInBlock(address, entry) : normalHostName(entry) === normalHostName(host),
  );
  // Link-local is where the metadata service answers with the worker's credentials: no list opens it.
  if (listed && kind !== 'multicast' && kind !== 'unspecified' && kind !== 'link-local') return undefined;
  if (kind === 'loopback' && policy.allowLoopback) return undefined;
  if ((kind === 'private' || kind === 'unique-local' || kind === 'cgnat') && policy.allowPrivateNetworks)
    return undefined;
  const fix =
    kind === 'loopback'
      ? `${policy.settingPrefix}_LOOPBACK=true`
      : kind === 'private' || kind === 'unique-local' || kind === 'cgnat'
        ? `${policy.settingPrefix}_PRIVATE_NETWORKS=true or list it in ${policy.settingPrefix}_HOSTS`
        : undefined;
  return (
    `refused to connect to ${named}: it is ${ADDRESS_CLASS_NAMES[kind]}` +
    (fix ? `; set ${fix} on the workers if this target is meant` : '')
  );
}

/** Why a URL's host, as a URL parser reads it, may not be reached, when that is known before any lookup. */
export function urlTargetRefusal(url: URL, policy: AddressPolicy): string | undefined {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isMetadataHostName(host)) return addressRefusal('0.0.0.0', host, policy);
  return isIpAddress(host) ? addressRefusal(host, host, policy) : undefined;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets (net.connect, http.Agent, undici's connect): it resolves the name and refuses the connection
 * when any address it got is refused, so the address checked is the address connected to.
 */
export function guardedLookup(policy: AddressPolicy, resolve: Resolver = systemResolver) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
          return;
        }
        for (const each of addresses) {
          const refusal = addressRefusal(each.address, hostname, policy);
          if (refusal) {
            callback(new TargetRefusedError(refusal), '');
            return;
          }
        }
        const first = addresses[0] as { address: string; family: number };
        if (options.all)
          callback(
            null,
            addresses.map((each) => ({ address: each.address, family: each.family })),
          );
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''),
    );
  };
}

/** An undici dispatcher whose every connection goes through `guardedLookup`; pass it to undici's `fetch`. */
export function guardedAgent(policy: AddressPolicy, resolve?: Resolver): Agent {
  return new Agent({ connect: { lookup: guardedLookup(policy, resolve) } });
}
