import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** A variable's value as stored: AES-256-GCM ciphertext, its 12-byte nonce and 16-byte tag. */
export interface Sealed {
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
}

/**
 * Encrypts variable values at rest with AES-256-GCM under the 32-byte key of VARIABLES_KEY. Each
 * value gets a fresh random nonce. The variable's project and id are authenticated with it
 * (additional data), so a ciphertext copied onto another row, or another project, fails to decrypt
 * instead of leaking there.
 */
export class VariableCipher {
  private readonly key: Buffer;

  constructor(keyBase64: string) {
    this.key = Buffer.from(keyBase64, "base64");
    if (this.key.length !== 32) throw new Error("VARIABLES_KEY must be 32 bytes, base64-encoded");
  }

  seal(value: string, projectId: string, variableId: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(additionalData(projectId, variableId));
    const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
    return { ciphertext, iv, tag: cipher.getAuthTag() };
  }

  /** Throws when the value was not sealed under this key for this variable (tampering, wrong key). */
  open(sealed: Sealed, projectId: string, variableId: string): string {
    const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.iv);
    decipher.setAAD(additionalData(projectId, variableId));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8");
  }
}

const additionalData = (projectId: string, variableId: string) =>
  Buffer.from(`testrun.catalog.variables/${projectId}/${variableId}`, "utf8");

/** Whether a string is the base64 form of exactly 32 bytes (the config check of VARIABLES_KEY). */
export const isBase64Key = (text: string): boolean =>
  /^[A-Za-z0-9+/]{43}=$/.test(text) || /^[A-Za-z0-9_-]{43}$/.test(text);
