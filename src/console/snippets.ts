/**
 * The signing snippets a service page offers its senders (SPEC §19, §22): one shell snippet
 * (curl + openssl) and one Node snippet per scheme. The secret is never in them — the console
 * does not have it (it is shown once) — they read it from INTAKE_SIGNING_SECRET. Each snippet is
 * run against a live server by test/e2e/console-snippets.test.ts: a snippet here that stops signing
 * as the server verifies fails that test.
 */

export type Scheme = "stripe" | "standard_webhooks";

export interface Snippet {
  /** Short name, also the copy button's label: "curl + openssl". */
  title: string;
  /** What it needs, in one line. */
  needs: string;
  language: "bash" | "javascript";
  code: string;
}

/** Single-quoted for a POSIX shell: safe whatever the text holds. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const SAMPLE = '{"type":"test.ping","message":"hello from my sender"}';

/** The shell snippets' first lines: the secret (from the environment), the URL and the body. */
function shellVariables(url: string): string {
  return `SECRET="$INTAKE_SIGNING_SECRET"   # whsec_…, shown once when the service was created or rotated
URL=${shellQuote(url)}
BODY=${shellQuote(SAMPLE)}
`;
}

/** The shell snippets' last curl arguments: the body, and the status printed after the answer. */
const SEND_BODY = `--data-raw "$BODY" -w '\\nHTTP %{http_code}\\n'`;

function stripeCurl(url: string): Snippet {
  return {
    title: "curl + openssl",
    needs: "bash, curl, openssl",
    language: "bash",
    code: `# X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, keyed with the whole secret.
${shellVariables(url)}TS=$(date +%s)
SIG=$(printf '%s.%s' "$TS" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')
# Send the same Idempotency-Key again when you retry this event.
curl -sS "$URL" -H 'content-type: application/json' \\
  -H "X-Service-Signature: t=$TS,v1=$SIG" \\
  -H "Idempotency-Key: $(openssl rand -hex 16)" \\
  ${SEND_BODY}
`,
  };
}

function stripeNode(url: string): Snippet {
  return {
    title: "Node + stripe",
    needs: "Node 18+, npm install stripe",
    language: "javascript",
    code: `// Stripe's SDK signs exactly as Intake verifies (X-Service-Signature: t=…,v1=…).
import { randomUUID } from "node:crypto";
import Stripe from "stripe";

const stripe = new Stripe("sk_unused"); // only its webhook signer is used: no call to Stripe
const url = ${JSON.stringify(url)};
const body = JSON.stringify({ type: "test.ping", message: "hello from my sender" });
const signature = stripe.webhooks.generateTestHeaderString({
  payload: body,
  secret: process.env.INTAKE_SIGNING_SECRET, // whsec_…, shown once
});
const res = await fetch(url, {
  method: "POST",
  headers: {
    "content-type": "application/json",
    "x-service-signature": signature,
    "idempotency-key": randomUUID(), // send the same key again when you retry this event
  },
  body,
});
console.log(res.status, await res.text());
`,
  };
}

function standardCurl(url: string): Snippet {
  return {
    title: "curl + openssl",
    needs: "bash, curl, openssl, base64, od",
    language: "bash",
    code: `# Standard Webhooks: webhook-signature is v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">,
# keyed with the base64 decoding of the secret after whsec_.
${shellVariables(url)}ID="msg_$(openssl rand -hex 16)"   # also the event's idempotency key: send the same id when you retry
TS=$(date +%s)
KEY=\${SECRET#whsec_}
while [ $(( \${#KEY} % 4 )) -ne 0 ]; do KEY="$KEY="; done   # padding, for a secret made before a scheme switch
KEY=$(printf '%s' "$KEY" | base64 -d | od -An -v -tx1 | tr -d ' \\n')
SIG=$(printf '%s.%s.%s' "$ID" "$TS" "$BODY" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$KEY" -binary | base64)
curl -sS "$URL" -H 'content-type: application/json' \\
  -H "webhook-id: $ID" -H "webhook-timestamp: $TS" -H "webhook-signature: v1,$SIG" \\
  ${SEND_BODY}
`,
  };
}

function standardNode(url: string): Snippet {
  return {
    title: "Node + standardwebhooks",
    needs: "Node 18+, npm install standardwebhooks",
    language: "javascript",
    code: `// The Standard Webhooks library (the svix package signs the same way).
import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";

const webhook = new Webhook(process.env.INTAKE_SIGNING_SECRET); // whsec_…, shown once
const url = ${JSON.stringify(url)};
const body = JSON.stringify({ type: "test.ping", message: "hello from my sender" });
const id = \`msg_\${randomUUID()}\`; // also the event's idempotency key: send the same id when you retry
const sentAt = new Date();
const res = await fetch(url, {
  method: "POST",
  headers: {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
    "webhook-signature": webhook.sign(id, sentAt, body),
  },
  body,
});
console.log(res.status, await res.text());
`,
  };
}

/** The ingest URL of a service, on the origin the console was served from. */
export function ingestUrl(origin: string, serviceId: string): string {
  return `${origin}/v1/ingest/${serviceId}`;
}

export function snippetsFor(scheme: Scheme, url: string): Snippet[] {
  return scheme === "standard_webhooks" ? [standardCurl(url), standardNode(url)] : [stripeCurl(url), stripeNode(url)];
}
