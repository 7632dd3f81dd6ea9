import { createHash, randomBytes } from "node:crypto";

/** A fresh unguessable credential (256 bits, base64url): session ids, link tokens, OIDC state. */
export const newCredential = (): string => randomBytes(32).toString("base64url");

/** What is stored of a credential: its SHA-256, hex. A leaked table lets nobody sign in. */
export const digestOf = (credential: string): string => createHash("sha256").update(credential).digest("hex");

/** A raw query's timestamptz: MikroORM's `execute` may hand back PostgreSQL's text form. */
export const asDate = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
