/**
 * Response compression (SPEC §20, docs/api.md "Compression"): a body of 1 KiB or more of a
 * text type is sent gzip- or br-encoded when the request's `Accept-Encoding` offers it. The
 * edge's step 7 compresses what a route built per request (lists, `/openapi.json`,
 * `/metrics`); the console's and /docs' files are compressed once, when they are bundled
 * (`Precompressed`), and carry their `Content-Encoding` into step 7, which leaves them alone.
 * Streams (SSE, Connect, gRPC-Web) are never compressed here.
 */
import { brotliCompressSync, constants } from "node:zlib";

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

/**
 * `bytes` in `encoding`. Per request, brotli at a middle quality; once per process for bundled
 * files, a little higher (the maximum costs many times the CPU on the /docs bundle for a few
 * percent).
 */
export function encode(bytes: Uint8Array, encoding: Encoding, once = false): Uint8Array<ArrayBuffer> {
  if (encoding === "gzip") return Bun.gzipSync(bytes as Uint8Array<ArrayBuffer>, { level: once ? 9 : 6 });
  return brotliCompressSync(bytes, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: once ? 7 : 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
    },
  });
}

/** Step 7's compression of a response built per request: its body read, encoded when it is large enough. */
export async function compressed(response: Response, encoding: Encoding): Promise<Response> {
  const bytes = await response.bytes();
  if (bytes.byteLength < COMPRESS_MIN_BYTES) return new Response(bytes, response);
  const encoded = new Response(encode(bytes, encoding), response);
  encoded.headers.set("content-encoding", encoding);
  encoded.headers.append("vary", "Accept-Encoding");
  encoded.headers.delete("content-length");
  return encoded;
}

/** A file served as it is, gzip or br: each made once, on first use. */
export class Precompressed {
  readonly #identity: Uint8Array<ArrayBuffer>;
  #gzip: Uint8Array<ArrayBuffer> | null = null;
  #br: Uint8Array<ArrayBuffer> | null = null;

  constructor(bytes: Uint8Array<ArrayBuffer>) {
    this.#identity = bytes;
  }

  /** Both encodings made now: for files compressed as they are bundled (the console's). */
  static now(bytes: Uint8Array<ArrayBuffer>): Precompressed {
    const packed = new Precompressed(bytes);
    if (bytes.byteLength >= COMPRESS_MIN_BYTES) {
      packed.#gzip = encode(bytes, "gzip", true);
      packed.#br = encode(bytes, "br", true);
    }
    return packed;
  }

  /** The body for a request offering `accept` (null: no header), with its `Content-Encoding` set in `headers`. */
  body(accept: string | null, headers: Headers): Uint8Array<ArrayBuffer> {
    headers.append("vary", "Accept-Encoding");
    const encoding = accept === null || this.#identity.byteLength < COMPRESS_MIN_BYTES ? null : pickEncoding(accept);
    if (encoding === null) return this.#identity;
    headers.set("content-encoding", encoding);
    if (encoding === "gzip") {
      this.#gzip ??= encode(this.#identity, "gzip", true);
      return this.#gzip;
    }
    this.#br ??= encode(this.#identity, "br", true);
    return this.#br;
  }
}
