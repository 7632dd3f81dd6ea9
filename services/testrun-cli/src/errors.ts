// What a failed request means for the person reading the CI log: the API's own message, its code,
// and the extras that say what to do (402 required/available, 409 candidates).
import { ApiError, MaybeStarted, NetworkError } from "@testrun/api-client";

const hints: Record<number, string> = {
  401: "check TESTRUN_API_KEY: unknown, expired and revoked keys get 401",
  403: "the key's creator is no longer an Editor or above; create a new key",
};
/** `testrun push` presents a content token instead (docs/keys.md, "Content tokens"). */
const pushHints: Record<number, string> = {
  401: "check TESTRUN_CONTENT_TOKEN: unknown, expired and revoked content tokens (and API keys) get 401",
  403: "an Editor creates a new content token in the console's API & CI",
};

export function explain(error: unknown, command?: "push"): string {
  if (error instanceof MaybeStarted) return `${error.message} (last failure: ${explain(error.last)})`;
  if (error instanceof NetworkError) return `no answer from the Testrun API: ${error.message}`;
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const { body, status } = error;
  let message = body.error;
  if (status === 402 && typeof body.required === "number" && !message.includes(String(body.required))) {
    message += ` (required ${body.required}, available ${body.available})`;
  }
  if (status === 409 && Array.isArray(body.candidates) && body.candidates.length) {
    message += `; candidates: ${body.candidates.join(", ")}`;
  }
  const hint = (command === "push" ? pushHints : hints)[status];
  return `${message} (HTTP ${status}${body.code ? ` ${body.code}` : ""})${hint ? `: ${hint}` : ""}`;
}
