import { createHash, randomBytes } from "node:crypto";

/** A fresh unguessable credential (256 bits, base64url): session ids, link tokens, OIDC state. */
export const newCredential = (): string => randomBytes(32).toString("base64url");

/** What is stored of a credential: its SHA-256, hex. A leaked table lets nobody sign in. */
export const digestOf = (credential: string): string => createHash("sha256").update(credential).digest("hex");
