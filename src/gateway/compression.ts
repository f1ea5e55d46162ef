/**
 * Response compression (SPEC §20, docs/api.md "Compression"): a body of 1 KiB or more of a
 * text type is sent gzip- or br-encoded when the request's `Accept-Encoding` offers it. The
 * edge's step 7 compresses what a route built per request (lists, `/openapi.json`,
 * `/metrics`); the console's and /docs' files are compressed once, when they are bundled
 * (`Precompressed`), and carry their `Content-Encoding` into step 7, which leaves them alone.
 * Streams (SSE, Connect, gRPC-Web) are never compressed here.
 */
import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, constants, gzip } from "node:zlib";

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export type Encoding = "br" | "gzip";

/** Smaller bodies are sent as they are: the encoding's framing would eat most of the saving. */
export const COMPRESS_MIN_BYTES = 1024;

const COMPRESSIBLE =
  /^(?:application\/(?:json|javascript|openapi\+json|problem\+json)|text\/(?!event-stream)|image\/svg)/;

/**
 * The encoding to answer with: br when offered, else gzip, else none. A coding listed with
 * `q=0` is refused; `*` offers both.
 */
export function pickEncoding(accept: string): Encoding | null {
  let br = false;
  let gzip = false;
  for (const part of accept.split(",")) {
    const [rawName, ...params] = part.split(";");
    const name = (rawName ?? "").trim().toLowerCase();
    const refused = params.some((p) => /^\s*q\s*=\s*0(?:\.0*)?\s*$/i.test(p));
    if (refused) continue;
    if (name === "br") br = true;
    else if (name === "gzip" || name === "x-gzip") gzip = true;
    else if (name === "*") br = gzip = true;
  }
  return br ? "br" : gzip ? "gzip" : null;
}

/** A type worth compressing (and not a stream's). */
export function compressibleType(contentType: string | null): boolean {
  return contentType !== null && COMPRESSIBLE.test(contentType);
}

/** From this size a body built per request is encoded at the fast settings, off the event loop. */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * `bytes` in `encoding`, for a body built per request: a small one (a page of a list) in-thread
 * at a middle setting; a large one (a feed page of 1,000 events) on zlib's thread pool at the
 * fastest setting, whose ratio on JSON is close to the middle one's for a fraction of the CPU,
 * and which stalls no other request meanwhile (bench scenario 8). Files bundled once per process
 * use `encodeOnce`, a little higher (the maximum costs many times the CPU on the /docs bundle
 * for a few percent).
 */
export function encode(
  bytes: Uint8Array,
  encoding: Encoding,
): Uint8Array<ArrayBuffer> | Promise<Uint8Array<ArrayBuffer>> {
  const size = bytes.byteLength;
  if (size >= LARGE_BODY_BYTES) return encodeOffThread(bytes, encoding, 1);
  if (encoding === "gzip") return Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>, { level: 6 });
  return brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: size },
  });
}

/** Step 7's compression of a response built per request: its body read, encoded when it is large enough. */
export async function compressed(response: Response, encoding: Encoding): Promise<Response> {
  const bytes = await response.bytes();
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return new Response(bytes, response);
  const encoded = new Response(await encode(bytes, encoding), response);
  encoded.headers.set("content-encoding", encoding);
  encoded.headers.append("vary", "Accept-Encoding");
  encoded.headers.delete("content-length");
  return encoded;
}

/** `bytes` encoded on zlib's thread pool at `level` (gzip's level, or brotli's quality). */
async function encodeOffThread(bytes: Uint8Array, encoding: Encoding, level: number): Promise<Uint8Array<ArrayBuffer>> {
  const out =
    encoding === "gzip"
      ? await gzipAsync(bytes, { level })
      : await brotliAsync(bytes, {
          params: { [constants.BROTLI_PARAM_QUALITY]: level, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
        });
  return new Uint8Array(out.buffer as ArrayBuffer, out.byteOffset, out.byteLength);
}

/**
 * `bytes` encoded off the event loop at the once-per-process settings: a large bundle (the /docs
 * one) compressed in-thread would stall every request meanwhile.
 */
function encodeOnce(bytes: Uint8Array<ArrayBuffer>, encoding: Encoding): Promise<Uint8Array<ArrayBuffer>> {
  return encodeOffThread(bytes, encoding, encoding === "gzip" ? 9 : 7);
}

/**
 * A file served as it is, gzip or br. Each encoding is made once, off the event loop; until it
 * is ready the file is sent unencoded.
 */
export class Precompressed {
  readonly #identity: Uint8Array<ArrayBuffer>;
  readonly #encoded: Partial<Record<Encoding, Uint8Array<ArrayBuffer>>> = {};
  readonly #pending = new Set<Encoding>();

  constructor(bytes: Uint8Array<ArrayBuffer>) {
    this.#identity = bytes;
  }

  /** Both encodings made before it is returned: for files compressed as they are bundled (the console's). */
  static async now(bytes: Uint8Array<ArrayBuffer>): Promise<Precompressed> {
    const packed = new Precompressed(bytes);
    if (bytes.byteLength >= COMPRESS_MIN_BYTES) {
      const [gz, br] = await Promise.all([encodeOnce(bytes, "gzip"), encodeOnce(bytes, "br")]);
      packed.#encoded.gzip = gz;
      packed.#encoded.br = br;
    }
    return packed;
  }

  /** The body for a request offering `accept` (null: no header), with its `Content-Encoding` set in `headers`. */
  body(accept: string | null, headers: Headers): Uint8Array<ArrayBuffer> {
    headers.append("vary", "Accept-Encoding");
    const encoding = accept === null || this.#identity.byteLength < COMPRESS_MIN_BYTES ? null : pickEncoding(accept);
    if (encoding === null) return this.#identity;
    const ready = this.#encoded[encoding];
    if (ready === undefined) {
      this.#start(encoding);
      return this.#identity;
    }
    headers.set("content-encoding", encoding);
    return ready;
  }

  /** Encodes once in the background; a failure leaves the file served unencoded. */
  #start(encoding: Encoding): void {
    if (this.#pending.has(encoding)) return;
    this.#pending.add(encoding);
    encodeOnce(this.#identity, encoding).then(
      (bytes) => {
        this.#encoded[encoding] = bytes;
      },
      () => {},
    );
  }
}
