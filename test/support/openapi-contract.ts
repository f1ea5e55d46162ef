/**
 * Checks requests and answers against the OpenAPI document the app serves (SPEC §20: what the
 * document says a request may be, the server accepts; what the server answers, the document
 * describes). The schemas are the document's own, compiled by Ajv (JSON Schema 2020-12, the
 * dialect of OpenAPI 3.1) with ajv-formats; this module only finds the operation, its
 * parameters, body and answer in the document, which no maintained validator does for 3.1 on
 * Bun (openapi-backend checks the document against the 3.0 schema and refuses it).
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// biome-ignore lint/suspicious/noExplicitAny: the document is walked freely
type Any = any;

const DOC_ID = "intake-openapi.json";

/** What the document says about one exchange: each entry a mismatch. */
export interface Verdict {
  /** Undocumented operation, or a parameter, header or body the document does not allow. */
  request: string[];
  /** Undocumented status, media type, header, or a body the schema refuses. */
  response: string[];
}

export interface Exchange {
  method: string;
  /** Path with its query, as sent. */
  url: string;
  requestHeaders: Headers;
  requestBody: Uint8Array | null;
  status: number;
  responseHeaders: Headers;
  /** null: not read (a stream). */
  responseText: string | null;
}

/** The response headers Intake sets that a document must declare where they occur. */
const WATCHED_HEADERS = ["x-request-id", "ratelimit", "ratelimit-policy", "retry-after", "www-authenticate", "allow"];

const essence = (mediaType: string) => (mediaType.split(";")[0] ?? "").trim().toLowerCase();
const mediaParams = (mediaType: string) =>
  new Map(
    mediaType
      .split(";")
      .slice(1)
      .map((p) => p.split("=").map((s) => s.trim().toLowerCase()) as [string, string]),
  );

/** The declared media type an actual Content-Type falls under: same type and every declared parameter. */
function matchMedia(declared: string[], actual: string): string | undefined {
  const exact = declared.find((d) => {
    if (essence(d) !== essence(actual)) return false;
    const got = mediaParams(actual);
    return [...mediaParams(d)].every(([k, v]) => got.get(k) === v);
  });
  return exact ?? declared.find((d) => d === "*/*");
}

export function createContractChecker(document: unknown) {
  const doc = document as Any;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_ID);
  const compiled = new WeakMap<object, ValidateFunction>();

  /** A schema of the document, its local `$ref`s pointed at the document. */
  function validator(schema: object): ValidateFunction {
    let fn = compiled.get(schema);
    if (!fn) {
      const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${DOC_ID}#/`));
      fn = ajv.compile(rebased);
      compiled.set(schema, fn);
    }
    return fn;
  }

  function check(schema: object | undefined, value: unknown, where: string, out: string[]) {
    if (!schema) return;
    const fn = validator(schema);
    if (!fn(value)) out.push(`${where}: ${ajv.errorsText(fn.errors, { dataVar: where })}`);
  }

  const resolve = (node: Any): Any =>
    node && typeof node.$ref === "string"
      ? node.$ref
          .slice(2)
          .split("/")
          .map((k: string) => k.replaceAll("~1", "/").replaceAll("~0", "~"))
          .reduce((at: Any, k: string) => at?.[k], doc)
      : node;

  /** Paths without a template first: `/v1/feed/stream` is never taken for a `{id}`. */
  const templates = Object.keys(doc.paths)
    .map((path) => ({
      path,
      names: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
      pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "([^/]+)")}$`),
    }))
    .sort((a, b) => a.names.length - b.names.length);

  /** A parameter's text as the JSON value its schema describes (query and header values are text). */
  function typed(schema: Any, text: string): unknown {
    const s = resolve(schema) ?? {};
    const types = [s.type].flat();
    if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
    return text;
  }

  function checkRequest(x: Exchange, out: string[]): Any | null {
    const url = new URL(x.url, "http://contract.test");
    const method = x.method.toLowerCase();
    const found = templates.find((t) => t.pattern.test(url.pathname) && doc.paths[t.path][method]);
    if (!found) {
      out.push(`${x.method} ${url.pathname}: no such operation in the document`);
      return null;
    }
    const op = doc.paths[found.path][method];
    const values = found.pattern.exec(url.pathname)?.slice(1) ?? [];
    for (const raw of op.parameters ?? []) {
      const p = resolve(raw);
      let text: string | null = null;
      if (p.in === "path") {
        const i = found.names.indexOf(p.name);
        text = i >= 0 ? decodeURIComponent(values[i] ?? "") : null;
      } else if (p.in === "query") text = url.searchParams.get(p.name);
      else if (p.in === "header") text = x.requestHeaders.get(p.name);
      if (text === null) {
        if (p.required) out.push(`${p.in} parameter ${p.name}: required, absent`);
        continue;
      }
      check(p.schema, typed(p.schema, text), `${p.in} parameter ${p.name}`, out);
    }
    const body = resolve(op.requestBody);
    const sent = x.requestBody && x.requestBody.length > 0 ? x.requestBody : null;
    if (!body) {
      if (sent) out.push("a body was sent to an operation that documents none");
    } else if (!sent) {
      if (body.required) out.push("request body: required, absent");
    } else {
      const contentType = x.requestHeaders.get("content-type") ?? "";
      const media = matchMedia(Object.keys(body.content ?? {}), contentType);
      if (!media) out.push(`request Content-Type ${JSON.stringify(contentType)}: not documented`);
      else {
        let value: unknown;
        try {
          value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(sent));
        } catch {
          out.push("request body: not JSON");
          return op;
        }
        check(body.content[media].schema, value, "request body", out);
      }
    }
    return op;
  }

  function checkResponse(op: Any, x: Exchange, out: string[]) {
    const responses = op.responses ?? {};
    const key = [String(x.status), `${String(x.status)[0]}XX`, "default"].find((k) => responses[k] !== undefined);
    if (!key) {
      out.push(`status ${x.status}: not documented`);
      return;
    }
    const response = resolve(responses[key]);
    const declaredHeaders = new Map(
      Object.entries(response.headers ?? {}).map(([name, h]) => [name.toLowerCase(), resolve(h)]),
    );
    for (const name of WATCHED_HEADERS) {
      const value = x.responseHeaders.get(name);
      const header = declaredHeaders.get(name);
      if (value === null) {
        if (header?.required) out.push(`header ${name}: required, absent`);
        continue;
      }
      if (!header) out.push(`header ${name}: sent, not documented for ${x.status}`);
      else check(header.schema, typed(header.schema, value), `header ${name}`, out);
    }
    const contentType = x.responseHeaders.get("content-type");
    const content = response.content ?? {};
    if (x.status === 204 || x.method === "HEAD") {
      if (x.responseText) out.push(`status ${x.status}: a body where none is documented`);
      return;
    }
    if (!contentType) {
      if (Object.keys(content).length > 0) out.push("no Content-Type where a body is documented");
      return;
    }
    const media = matchMedia(Object.keys(content), contentType);
    if (!media) {
      out.push(`response Content-Type ${JSON.stringify(contentType)}: not documented for ${x.status}`);
      return;
    }
    if (x.responseText === null || essence(media) !== "application/json") return;
    let value: unknown;
    try {
      value = JSON.parse(x.responseText);
    } catch {
      out.push("response body: not JSON");
      return;
    }
    check(content[media].schema, value, "response body", out);
  }

  return {
    check(x: Exchange): Verdict {
      const verdict: Verdict = { request: [], response: [] };
      const op = checkRequest(x, verdict.request);
      if (op) checkResponse(op, x, verdict.response);
      return verdict;
    },
  };
}
