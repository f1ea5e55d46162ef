import { defineConfig } from "drizzle-kit";

// biome-ignore lint/style/noDefaultExport: drizzle-kit reads the config from the module's default export.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/store/sqlite/schema.ts",
  out: "./drizzle/sqlite",
});
