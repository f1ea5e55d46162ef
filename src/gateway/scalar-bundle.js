// Scalar's self-contained browser bundle, as a file path: on disk under `bun run`, embedded in
// the one-file build. The package exports only its ESM entry, so the bundle is named by its path
// in node_modules (a plain .js module because TypeScript cannot type a `type: "file"` import of
// a .js file; scalar-bundle.d.ts types it).
import path from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

export const scalarBundlePath = path;
