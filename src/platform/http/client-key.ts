import ipaddr from 'ipaddr.js';

/**
 * The client an address stands for, in rate limits: an IPv4 address (also written IPv4-mapped, as Node
 * reports it on dual-stack sockets) as is, an IPv6 address by its /64 network, since one subscriber
 * usually holds a whole /64 and could otherwise step around a limit address by address.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address.toLowerCase();
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip.toString();
  return `${(ip as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}
