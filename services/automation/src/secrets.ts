import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

// Webhook signing secrets (docs/automation.md, "Signatures"): `whsec_` + base64 of 24 random
// bytes, shown once, stored sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY, the webhook's id
// authenticated with it (a sealed secret copied onto another webhook does not open there). Webhook
// URLs are sealed the same way, under the part name "url" (a sealed secret copied into the URL's
// column does not open as a URL, nor the reverse).

/** A new signing secret: `whsec_` and the base64 of 24 random bytes (192 bits). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;

export class SecretCipher {
  readonly #key: Buffer;

  constructor(keyBase64: string) {
    this.#key = Buffer.from(keyBase64, "base64");
    if (this.#key.length !== 32) throw new Error("WEBHOOK_SECRETS_KEY must be 32 bytes, base64-encoded");
  }

  /** `<iv>.<tag>.<ciphertext>`, each base64; `part` names what is sealed when not a secret. */
  seal(secret: string, webhookId: string, part?: "url"): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(aad(webhookId, part));
    const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
    return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString("base64")).join(".");
  }

  /** Throws when the text was not sealed under this key for this webhook (and part). */
  open(sealed: string, webhookId: string, part?: "url"): string {
    const [iv, tag, ciphertext] = sealed.split(".").map((part) => Buffer.from(part, "base64")) as [
      Buffer,
      Buffer,
      Buffer,
    ];
    const decipher = createDecipheriv("aes-256-gcm", this.#key, iv);
    decipher.setAAD(aad(webhookId, part));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  }
}

/** What is authenticated with a sealed value: its webhook, and its part (secrets have none, as before parts). */
const aad = (webhookId: string, part?: string) =>
  Buffer.from(`testrun.automation.webhooks/${webhookId}${part ? `/${part}` : ""}`);

/**
 * One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed
 * with the secret's bytes (the base64 after `whsec_`).
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** The webhook-signature header: one signature per secret still valid, space-separated. */
export const signatureHeader = (secrets: readonly string[], id: string, timestamp: number, body: string) =>
  secrets.map((secret) => sign(secret, id, timestamp, body)).join(" ");

/** A badge's token: 160 random bits, base64url (27 characters), unguessable. */
export const newBadgeToken = (): string => randomBytes(20).toString("base64url");
