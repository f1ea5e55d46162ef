/**
 * How `Bun.serve` can end a streamed answer whose reader never reads (docs/feed.md, "A stalled
 * reader"): a bare server streams until the socket is full, then tries one way of ending the
 * answer; a raw client that never reads reports, from the kernel's table, whether its connection
 * is still open one and four seconds later. Not a test: run it by hand to re-check a Bun upgrade,
 *
 *   bun test/support/stalled-reader-repro.ts            # every way
 *   bun test/support/stalled-reader-repro.ts direct-close-error
 *
 * On Bun 1.4.5 (Linux) only `direct-close-error` closes the connection (a reset, within
 * milliseconds); the three with `server.timeout` close the server's side 1–4 s later (the
 * timer's granularity) and still leave the client's open behind the unsent bytes (FIN_WAIT1 on
 * the server); the rest leave both open until the reader reads again.
 */
import { connect } from "node:net";
import { tcpState } from "./tcp-state.ts";

const WAYS = [
  "error", // a default ReadableStream, controller.error()
  "close", // a default ReadableStream, controller.close()
  "timeout", // server.timeout(request, 1) alone
  "error-timeout", // controller.error() and server.timeout(request, 1)
  "direct-close", // a direct ReadableStream, controller.close()
  "direct-end", // a direct ReadableStream, controller.end()
  "direct-close-timeout", // a direct ReadableStream, controller.close() and server.timeout(request, 1)
  "direct-close-error", // a direct ReadableStream, controller.close(error)
] as const;
type Way = (typeof WAYS)[number];

const CHUNK = new Uint8Array(64 * 1024).fill(0x61);

async function attempt(way: Way): Promise<string> {
  let end: () => void = () => {};
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    development: false,
    idleTimeout: 30,
    fetch(request, srv) {
      const timeout = () => srv.timeout(request, 1);
      if (way.startsWith("direct")) {
        const body = new ReadableStream<Uint8Array>({
          type: "direct",
          async pull(controller) {
            end = () => {
              if (way === "direct-close") controller.close();
              else if (way === "direct-end") void controller.end();
              else if (way === "direct-close-timeout") {
                timeout();
                controller.close();
              } else controller.close(new Error("reset"));
            };
            // Written as the socket takes it, until it stops taking.
            for (;;) {
              const wrote = controller.write(CHUNK);
              if (typeof wrote !== "number") await wrote;
            }
          },
        });
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      }
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            end = () => {
              if (way === "error") controller.error(new Error("ended"));
              else if (way === "close") controller.close();
              else if (way === "timeout") timeout();
              else {
                timeout();
                controller.error(new Error("ended"));
              }
            };
          },
          pull(controller) {
            controller.enqueue(CHUNK);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  const socket = connect(server.port as number, "127.0.0.1");
  socket.on("error", () => {});
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  const localPort = socket.localPort as number;
  socket.write("GET /stream HTTP/1.1\r\nHost: repro\r\n\r\n");
  socket.pause(); // never reads
  await Bun.sleep(1_000); // the socket is full by now
  end();
  const port = server.port as number;
  const states = () =>
    `client ${(tcpState(localPort, port) ?? "gone (reset)").padEnd(12)} server ${tcpState(port, localPort) ?? "gone"}`;
  await Bun.sleep(1_000);
  const after1s = states();
  await Bun.sleep(3_000);
  const after4s = states();
  socket.destroy();
  await server.stop(true);
  return `${way.padEnd(21)} after 1 s: ${after1s.padEnd(40)} after 4 s: ${after4s}`;
}

const asked = process.argv[2];
const ways = asked ? WAYS.filter((way) => way === asked) : WAYS;
if (ways.length === 0) throw new Error(`one of: ${WAYS.join(", ")}`);
console.log(`Bun ${Bun.version}`);
for (const way of ways) console.log(await attempt(way));
