/**
 * Test support: loopback ports for a server that another program starts later (a docs example's
 * `cfghub serve --port N`, an etcd member), where port 0 cannot be used.
 *
 * A port the kernel handed out for port 0 and that was given back is a poor choice: it lies in the
 * kernel's ephemeral range, where every outgoing connection of every process on the machine also
 * takes its local port, so in the seconds before the server binds it, it can be taken and the
 * server fails with EADDRINUSE. These ports are taken below that range instead, where only a
 * program asking for that very port competes, and each is probed (listened on, then released).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The kernel's ephemeral range starts here (Linux's default when it cannot be read). */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** `count` distinct loopback ports, free when probed, outside the ephemeral range. */
export async function reservedPorts(count: number): Promise<number[]> {
  const high = ephemeralStart();
  const low = Math.max(1024, high - 12_000);
  const ports: number[] = [];
  for (let tries = 0; ports.length < count; tries++) {
    if (tries > 1000) throw new Error(`no ${count} free ports found from ${low} to ${high}`);
    const port = low + Math.floor(Math.random() * (high - low));
    if (!ports.includes(port) && (await listensOn(port))) ports.push(port);
  }
  return ports;
}
