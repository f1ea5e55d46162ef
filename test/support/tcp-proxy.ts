/**
 * A TCP forwarder on 127.0.0.1 for outage tests: clients connect to `port`, each connection
 * is piped to the upstream. Real sockets both ways: nothing is simulated above TCP.
 *
 * - `cut()` drops every connection and stops listening: what a crashed server looks like
 *   (clients see the close, new connections are refused).
 * - `blackhole()` is a silent partition: every connection stays open, no FIN or RST goes
 *   either way, but no byte gets through in either direction; new connections are accepted
 *   (as a kernel's backlog would) and hear nothing. Only a client-side timeout notices.
 * - `restore()` ends either. After a blackhole it ends the connections that lived through it
 *   (their byte streams now have gaps, as if the peers' retransmissions had given up), so
 *   each side sees a close and a fresh connection works again.
 */
import type { Socket, TCPSocketListener } from "bun";

interface Side {
  /** Bytes the socket did not take yet (write() returned less); flushed on drain. */
  queue: Uint8Array[];
}

interface Pair {
  client: Socket<Pair>;
  upstream: Socket<UpstreamData> | null;
  toClient: Side;
  toUpstream: Side;
  closed: boolean;
  /** Opened or caught by a blackhole: carries nothing, is ended by restore(). */
  held: boolean;
}

interface UpstreamData {
  pair: Pair;
}

function send(socket: Socket<Pair> | Socket<UpstreamData>, side: Side, bytes: Uint8Array): void {
  if (side.queue.length > 0) {
    // The callback's buffer may be reused once it returns: keep a copy.
    side.queue.push(bytes.slice());
    return;
  }
  const written = socket.write(bytes);
  if (written < bytes.length) side.queue.push(bytes.slice(Math.max(written, 0)));
}

function flush(socket: Socket<Pair> | Socket<UpstreamData>, side: Side): void {
  while (side.queue.length > 0) {
    const head = side.queue[0] as Uint8Array;
    const written = socket.write(head);
    if (written < head.length) {
      side.queue[0] = head.slice(Math.max(written, 0));
      return;
    }
    side.queue.shift();
  }
}

export interface TcpProxy {
  readonly port: number;
  /** Connections currently open through the proxy. */
  connections(): number;
  cut(): void;
  /** Silent partition: connections stay open, bytes are dropped both ways, no close is sent. */
  blackhole(): void;
  restore(): Promise<void>;
  close(): void;
}

export async function startTcpProxy(upstream: { hostname: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  let silent = false;

  const closePair = (pair: Pair) => {
    if (pair.closed) return;
    pair.closed = true;
    pairs.delete(pair);
    pair.client.terminate();
    pair.upstream?.terminate();
  };

  const listen = (port: number): TCPSocketListener<Pair> =>
    Bun.listen<Pair>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          const pair: Pair = {
            client,
            upstream: null,
            toClient: { queue: [] },
            toUpstream: { queue: [] },
            closed: false,
            held: silent,
          };
          client.data = pair;
          pairs.add(pair);
          // Partitioned: the client's bytes never reach the server, so no upstream at all.
          if (silent) return;
          Bun.connect<UpstreamData>({
            hostname: upstream.hostname,
            port: upstream.port,
            data: { pair },
            socket: {
              open(socket) {
                if (pair.closed) {
                  socket.terminate();
                  return;
                }
                pair.upstream = socket;
                flush(socket, pair.toUpstream);
              },
              data(_socket, bytes) {
                if (!pair.closed && !pair.held) send(client, pair.toClient, bytes);
              },
              drain(socket) {
                if (!pair.held) flush(socket, pair.toUpstream);
              },
              // A close during a partition does not reach the other side either.
              close() {
                if (!pair.held) closePair(pair);
              },
              error() {
                if (!pair.held) closePair(pair);
              },
            },
          }).catch(() => closePair(pair));
        },
        data(client, bytes) {
          const pair = client.data;
          if (pair.closed || pair.held) return;
          // Until the upstream is connected, queue; `open` above flushes.
          if (pair.upstream === null) pair.toUpstream.queue.push(bytes.slice());
          else send(pair.upstream, pair.toUpstream, bytes);
        },
        drain(client) {
          if (!client.data.held) flush(client, client.data.toClient);
        },
        close(client) {
          if (!client.data.held) closePair(client.data);
        },
        error(client) {
          if (!client.data.held) closePair(client.data);
        },
      },
    });

  let listener: TCPSocketListener<Pair> | null = listen(0);
  const port = listener.port;

  const cut = () => {
    silent = false;
    listener?.stop(true);
    listener = null;
    for (const pair of [...pairs]) closePair(pair);
  };

  return {
    port,
    connections: () => pairs.size,
    cut,
    blackhole() {
      silent = true;
      for (const pair of pairs) {
        pair.held = true;
        // Whatever was still queued is lost with the partition.
        pair.toClient.queue = [];
        pair.toUpstream.queue = [];
      }
    },
    async restore() {
      if (silent) {
        silent = false;
        for (const pair of [...pairs]) if (pair.held) closePair(pair);
      }
      if (listener) return;
      // The port was ours a moment ago; a rebind can still fail briefly, so retry (bounded).
      const deadline = Date.now() + 5_000;
      for (;;) {
        try {
          listener = listen(port);
          return;
        } catch (error) {
          if (Date.now() > deadline) throw error;
          await Bun.sleep(50);
        }
      }
    },
    close: cut,
  };
}
