/**
 * A Server-Sent Events reader over an app's fetch (no listener): the messages as they arrive,
 * whether the stream ended, and a wait for a condition on them.
 */
import type { App } from "../../src/app.ts";

export interface SseMessage {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface SseReader {
  res: Response;
  messages: SseMessage[];
  ended(): boolean;
  until(condition: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openSse(
  app: Pick<App, "fetch">,
  path: string,
  headers: Record<string, string>,
): Promise<SseReader> {
  const abort = new AbortController();
  const res = await app.fetch(new Request(`http://intake.test${path}`, { headers, signal: abort.signal }));
  const messages: SseMessage[] = [];
  let ended = false;
  let buffer = "";
  const reading = (async () => {
    if (!res.body || !res.ok) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const message: SseMessage = {};
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) message.comment = line.slice(1).trim();
            else {
              const at = line.indexOf(": ");
              message[line.slice(0, at) as "id" | "event" | "data"] = line.slice(at + 2);
            }
          }
          messages.push(message);
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  return {
    res,
    messages,
    ended: () => ended,
    async until(condition, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out; messages so far: ${JSON.stringify(messages)}`);
        await Bun.sleep(10);
      }
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}
