/**
 * The kernel's view of a loopback TCP connection, from Linux's /proc/net/tcp and tcp6: what a
 * test asks about a client socket that never reads, which itself notices neither a FIN nor a
 * reset until it reads again.
 */
import { readFileSync } from "node:fs";

const STATES: Record<string, string> = {
  "01": "ESTABLISHED",
  "02": "SYN_SENT",
  "03": "SYN_RECV",
  "04": "FIN_WAIT1",
  "05": "FIN_WAIT2",
  "06": "TIME_WAIT",
  "07": "CLOSE",
  "08": "CLOSE_WAIT",
  "09": "LAST_ACK",
  "0A": "LISTEN",
  "0B": "CLOSING",
};

/**
 * The state of the connection from local port `localPort` to remote port `remotePort`
 * ("ESTABLISHED", "CLOSE_WAIT", ...), or null once the kernel forgot it (closed by a reset).
 */
export function tcpState(localPort: number, remotePort: number): string | null {
  const local = localPort.toString(16).toUpperCase().padStart(4, "0");
  const remote = remotePort.toString(16).toUpperCase().padStart(4, "0");
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const [, localAddress, remoteAddress, state] = line.trim().split(/\s+/);
      if (localAddress?.endsWith(`:${local}`) && remoteAddress?.endsWith(`:${remote}`)) {
        return STATES[state ?? ""] ?? state ?? null;
      }
    }
  }
  return null;
}

/** Whether this machine shows its TCP table (Linux): the tests that read it need it. */
export const TCP_TABLE_READABLE = (() => {
  try {
    readFileSync("/proc/net/tcp", "utf8");
    return true;
  } catch {
    return false;
  }
})();
