import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/** The one answer to a request carrying NUL in its text, whichever service gets it. */
export const nulTextMessage = "text in the request must not contain NUL characters";

/**
 * Whether any text in a message (strings, map keys, nested messages, oneofs, lists) holds a NUL
 * character. `exempt` names fields as `<message type name>.<field>` whose text is never stored as
 * text (a variable's value, encrypted as bytes), so NUL is fine there.
 */
export function holdsNul(value: unknown, exempt: ReadonlySet<string> = new Set()): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some((item) => holdsNul(item, exempt));
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return false;
  const typeName = (value as { $typeName?: unknown }).$typeName;
  return Object.entries(value).some(
    ([key, inner]) =>
      !(typeof typeName === "string" && exempt.has(`${typeName}.${key}`)) &&
      (holdsNul(key, exempt) || holdsNul(inner, exempt)),
  );
}

/**
 * Refuses, with INVALID_ARGUMENT, every request whose text holds a NUL character: PostgreSQL text
 * can neither store nor compare it, so such an id or name would otherwise fail deep in a query and
 * reach the caller as INTERNAL (docs/architecture.md, "What every service shares").
 */
export function nulTextInterceptor(exempt: ReadonlySet<string>): Interceptor {
  const refuse = (message: unknown) => {
    if (holdsNul(message, exempt)) throw new ConnectError(nulTextMessage, Code.InvalidArgument);
  };
  return (next) => async (req) => {
    if (!req.stream) {
      refuse(req.message);
      return next(req);
    }
    const messages = req.message;
    async function* checked() {
      for await (const message of messages) {
        refuse(message);
        yield message;
      }
    }
    return next({ ...req, message: checked() });
  };
}
