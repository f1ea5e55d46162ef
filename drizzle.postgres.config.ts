import { defineConfig } from "drizzle-kit";

// biome-ignore lint/style/noDefaultExport: drizzle-kit reads the config from the module's default export.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/schema.ts",
  out: "./drizzle/postgres",
});
