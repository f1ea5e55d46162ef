/**
 * Bulk seeding of a SQLite data file before Intake starts on it: tokens for the auth-cost
 * scenario, services for the pagination scenario. One transaction and one prepared statement
 * per table, through the store's own drizzle schema, so a schema change breaks the type check
 * here rather than seeding rows the store would not read. Digests use the store's scheme
 * (createTokenHasher with the pepper the bench hands Intake); tokens have the real format,
 * checksum included, so they pass the shape check and reach the lookup.
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync, readSync } from "node:fs";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { createTokenHasher, TOKEN_PREFIX, toBase62, tokenChecksum, tokenPrefix } from "../../src/domain/credentials.ts";
import { createIdGenerator } from "../../src/domain/ids.ts";
import { encodeCursor } from "../../src/domain/pagination.ts";
import { createSealer } from "../../src/domain/sealing.ts";
import { apiTokens, services } from "../../src/store/sqlite/schema.ts";

function open(path: string) {
  const client = new Database(path, { readwrite: true });
  client.exec("PRAGMA busy_timeout = 5000");
  // Random digests land all over their index: a large page cache keeps the seed CPU-bound.
  client.exec("PRAGMA cache_size = -1000000");
  return { client, db: drizzle({ client }) };
}

export interface SeededTokens {
  /** A sample of the seeded credentials, spread over the whole range, for cold lookups. */
  sample: string[];
  seconds: number;
}

/**
 * Inserts `count` read_only member tokens into `tenantId`. The body's first 8 chars are the
 * row number in base62 (unique prefixes without a retry loop); the rest is random per run.
 */
export function seedTokens(opts: {
  path: string;
  tenantId: string;
  count: number;
  pepper: string;
  sampleSize: number;
}): SeededTokens {
  const started = performance.now();
  const { client, db } = open(opts.path);
  const hash = createTokenHasher(opts.pepper);
  const newId = createIdGenerator();
  const p = sql.placeholder;
  const insert = db
    .insert(apiTokens)
    .values({
      id: p("id"),
      tenantId: p("tenantId"),
      name: p("name"),
      scope: p("scope"),
      role: p("role"),
      prefix: p("prefix"),
      digest: p("digest"),
      createdAt: p("createdAt"),
      createdBy: p("createdBy"),
      expiresAt: p("expiresAt"),
      lastUsedAt: p("lastUsedAt"),
      revokedAt: p("revokedAt"),
    })
    .prepare();
  const tail = Buffer.from(crypto.getRandomValues(new Uint8Array(32)))
    .toString("base64")
    .replace(/[^0-9A-Za-z]/g, "")
    .padEnd(29, "x")
    .slice(0, 29);
  const step = Math.max(1, Math.floor(opts.count / Math.max(1, opts.sampleSize)));
  const sample: string[] = [];
  const now = Date.now();
  try {
    // bun:sqlite's transaction: BEGIN IMMEDIATE, COMMIT, or ROLLBACK on a throw.
    client
      .transaction(() => {
        for (let i = 0; i < opts.count; i++) {
          const random = toBase62(i, 8) + tail;
          const token = TOKEN_PREFIX + random + tokenChecksum(random);
          insert.run({
            id: newId(),
            tenantId: opts.tenantId,
            name: `bench-${i}`,
            scope: "read_only",
            role: "member",
            prefix: tokenPrefix(token),
            digest: hash(token),
            createdAt: now,
            createdBy: null,
            expiresAt: null,
            lastUsedAt: null,
            revokedAt: null,
          });
          if (i % step === 0 && sample.length < opts.sampleSize) sample.push(token);
        }
      })
      .immediate();
  } finally {
    client.close();
  }
  return { sample, seconds: (performance.now() - started) / 1000 };
}

export interface SeededServices {
  /** Raw ids, newest first (the order the list route pages in). */
  idsNewestFirst: string[];
  seconds: number;
}

/** Inserts `count` services into `tenantId`, with secrets sealed under the bench's key. */
export function seedServices(opts: {
  path: string;
  tenantId: string;
  count: number;
  secretsKey: Uint8Array;
}): SeededServices {
  const started = performance.now();
  const { client, db } = open(opts.path);
  const sealer = createSealer(opts.secretsKey);
  const newId = createIdGenerator();
  const p = sql.placeholder;
  const insert = db
    .insert(services)
    .values({
      id: p("id"),
      tenantId: p("tenantId"),
      serviceName: p("serviceName"),
      isMonitored: p("isMonitored"),
      secretCiphertext: p("secretCiphertext"),
      signingSecretPrefix: p("signingSecretPrefix"),
      previousSecretCiphertext: p("previousSecretCiphertext"),
      previousSecretExpiresAt: p("previousSecretExpiresAt"),
      secretRotatedAt: p("secretRotatedAt"),
      createdAt: p("createdAt"),
      updatedAt: p("updatedAt"),
    })
    .prepare();
  const ids: string[] = [];
  const now = Date.now();
  try {
    // bun:sqlite's transaction: BEGIN IMMEDIATE, COMMIT, or ROLLBACK on a throw.
    client
      .transaction(() => {
        for (let i = 0; i < opts.count; i++) {
          const id = newId();
          const secret = `whsec_bench${String(i).padStart(38, "0")}`;
          insert.run({
            id,
            tenantId: opts.tenantId,
            serviceName: `bench-service-${i}`,
            // The placeholder bypasses drizzle's boolean mapping: SQLite stores booleans as 0/1.
            isMonitored: 1,
            secretCiphertext: sealer.seal(secret, id),
            signingSecretPrefix: secret.slice(0, 10),
            previousSecretCiphertext: null,
            previousSecretExpiresAt: null,
            secretRotatedAt: null,
            createdAt: now,
            updatedAt: now,
          });
          ids.push(id);
        }
      })
      .immediate();
  } finally {
    client.close();
  }
  ids.reverse();
  return { idsNewestFirst: ids, seconds: (performance.now() - started) / 1000 };
}

/** The cursor GET /v1/services would hand out after the first `depth` rows of `tenantId`. */
export function cursorAfter(idsNewestFirst: string[], depth: number, tenantId: string): string {
  const last = idsNewestFirst[depth - 1];
  if (last === undefined) throw new Error(`only ${idsNewestFirst.length} rows seeded, need ${depth}`);
  return encodeCursor(last, { list: "services", tenantId });
}

/**
 * Reads a file through once so that all of it is in the OS page cache. This VM pages out
 * memory, file cache included, that nothing touched for about a minute (DAMON pageout,
 * kdamond; bench/README.md, "Cold auth by server CPU, from the page cache"): without this, most of a 1M-token store is back on the
 * disk by the time a cold round reads it, and that round measures the disk, not the lookup.
 */
export function loadIntoPageCache(path: string): void {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    while (readSync(fd, buffer) > 0) {
      // read and dropped: the page cache keeps what the read brought in
    }
  } finally {
    closeSync(fd);
  }
}
