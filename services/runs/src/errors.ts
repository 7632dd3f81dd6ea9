import { Code, ConnectError } from "@connectrpc/connect";

// The errors the runs service's handlers answer with, beyond those the store returns.

export const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);

/**
 * An error of another service, passed on as it came (code, message, details), without the
 * transport metadata of the original call.
 */
export const passOn = (error: unknown): ConnectError => {
  const e = ConnectError.from(error);
  const out = new ConnectError(e.rawMessage, e.code);
  // Received details are kept as they came (type and bytes); the server re-encodes them as they are.
  out.details.push(...e.details);
  return out;
};
