/**
 * Holds `STALL_COUNT` feed streams open without reading them (bench scenario 10), in a process
 * of its own so that the paused sockets cost the bench's measuring process nothing.
 *
 * Usage: STALL_URL=http://127.0.0.1:<port> STALL_TOKEN=<token> STALL_COUNT=100 bun bench/stalled-readers.ts
 * Prints "ready" once every request is sent; holds them until SIGTERM.
 */
import { connect, type Socket } from "node:net";
import { requiredEnv } from "./lib/procs.ts";

const { hostname, port } = new URL(requiredEnv("STALL_URL"));
const token = requiredEnv("STALL_TOKEN");
const count = Number(requiredEnv("STALL_COUNT"));
const sockets: Socket[] = [];
await Promise.all(
  Array.from(
    { length: count },
    () =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(
            `GET /v1/feed/stream?start=earliest HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
          );
          // Never read: the kernel's buffers fill, then Intake's writes stop.
          socket.pause();
          resolve();
        });
        socket.once("error", reject);
        sockets.push(socket);
      }),
  ),
);
process.stdout.write("ready\n");
process.on("SIGTERM", () => {
  for (const socket of sockets) socket.destroy();
  process.exit(0);
});
