// How the web app reaches the console's Connect API, and how it words what went wrong.
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  type EditConflict,
  EditConflictSchema,
  FieldViolationsSchema,
  InsufficientCreditsSchema,
} from "@testrun/gen/testrun/common/v1/errors_pb";
import { stillAsSent } from "./as-sent";
import { count, plural, sentence } from "./format";

/** ConsoleService, same origin, under /api (JSON: readable in the browser's network panel). */
export const transport = createConnectTransport({ baseUrl: "/api" });

/**
 * The same in binary protobuf, for the calls that carry test cases whole (ImportContent,
 * CreateTestCase, UpdateTestCase; catalog-bound.ts): their requests are as large as the catalog's
 * own only in its encoding (JSON is about 2.5 times larger; docs/console.md).
 */
export const binaryTransport = createConnectTransport({ baseUrl: "/api", useBinaryFormat: true });

export const errorOf = (error: unknown): ConnectError => ConnectError.from(error);

export const isSignedOut = (error: unknown) => error != null && errorOf(error).code === Code.Unauthenticated;
export const isNotFound = (error: unknown) => error != null && errorOf(error).code === Code.NotFound;

/** The message a person reads: what the service said, without the code prefix. */
export function messageOf(error: unknown): string {
  const failure = errorOf(error);
  const [short] = failure.findDetails(InsufficientCreditsSchema);
  if (short)
    return `This run needs ${plural(short.required, "credit")}; the project has ${count(short.available)}.`;
  if (failure.code === Code.Unavailable || failure.code === Code.Internal || failure.code === Code.Unknown)
    return "Testrun could not be reached or had a problem. Try again in a moment.";
  const text = failure.rawMessage || "Something went wrong.";
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Set once the page is on its way out, so a late failing query does not start a second navigation. */
let leaving = false;

/** Leaves the app for another page of the console (sign-in, after sign-out), once. */
export function leaveTo(path: string): void {
  if (leaving) return;
  leaving = true;
  window.location.assign(path);
}

/**
 * Whether the console refused a call because this browser's session ended (it had one: signed out
 * elsewhere, expired, or a member it acted as was removed), rather than because it never had one.
 */
export const sessionEnded = (error: unknown) =>
  isSignedOut(error) && errorOf(error).metadata.get("testrun-session") === "ended";

/**
 * Sends the browser to sign in, coming back to where it is now; says why when the session ended
 * (a call refused for it, or GetSession's `sessionEnded`).
 */
export function goToSignIn(error?: unknown, ended = sessionEnded(error)): void {
  if (window.location.pathname.startsWith("/sign-in")) return;
  const next = encodeURIComponent(`${window.location.pathname}${window.location.search}`);
  leaveTo(`/sign-in?${ended ? "error=session_ended&" : ""}next=${next}`);
}

/** A failed save as a form shows it: each error at its field, and what belongs to no field above the buttons. */
export interface FormErrors {
  /**
   * The catalog's description of what is wrong with a field (`name`, `base_url`…), if anything,
   * while the field still holds the value that was refused.
   */
  at: (field: string) => string | undefined;
  /** What no field of the form shows (an unknown field, a refusal, a failure); undefined if none. */
  other: string | undefined;
}

/** A save as a form made it: the failure, if any, and what was sent (a mutation's `variables`). */
export interface SaveAttempt {
  error: unknown;
  variables?: unknown;
}

/** A catalog field path (`base_url`, `test_case_ids.ids`) in the request as sent (`baseUrl`, `testCaseIds.ids`). */
function sentAt(variables: unknown, path: string): unknown {
  let value = variables;
  for (const part of path.split(".")) {
    const key = part.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
    value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * Splits a failed save by field: the catalog's INVALID_ARGUMENT carries a FieldViolations detail
 * naming each bad field, and an ALREADY_EXISTS is about the name (`nameField`). `current` holds
 * each field the form has, by the catalog's name, with the value it holds now: an error stays at
 * its field only while that is the value sent (as-sent.ts). Violations of fields the form does
 * not have are `other`, so nothing the service said goes unshown.
 */
export function formErrors(
  save: SaveAttempt,
  current: Readonly<Record<string, unknown>>,
  nameField = "name",
): FormErrors {
  if (!save.error) return { at: () => undefined, other: undefined };
  const failure = errorOf(save.error);
  const fields = Object.keys(current);
  const byField = new Map<string, string>();
  for (const detail of failure.findDetails(FieldViolationsSchema))
    for (const violation of detail.violations)
      if (fields.includes(violation.field) && !byField.has(violation.field))
        byField.set(violation.field, sentence(violation.description));
  if (failure.code === Code.AlreadyExists && fields.includes(nameField))
    byField.set(nameField, sentence(failure.rawMessage));
  const unshown = failure
    .findDetails(FieldViolationsSchema)
    .some((detail) => detail.violations.some((violation) => !fields.includes(violation.field)));
  return {
    at: (field) =>
      save.variables === undefined || stillAsSent(sentAt(save.variables, field), current[field])
        ? byField.get(field)
        : undefined,
    // Decided by what was refused, not by what is still shown: a fixed field does not turn its
    // error into a notice above the buttons.
    other: byField.size === 0 || unshown ? messageOf(failure) : undefined,
  };
}

/** Every FieldViolation a refusal carries (none for other failures). */
export const fieldViolationsOf = (error: unknown) =>
  error
    ? errorOf(error)
        .findDetails(FieldViolationsSchema)
        .flatMap((detail) => detail.violations)
    : [];

/**
 * Why a save or delete made on an old version was refused: the catalog's ABORTED with an
 * EditConflict detail (who stored the current version, when, and its number); none otherwise.
 */
export function editConflictOf(error: unknown): EditConflict | undefined {
  if (!error) return undefined;
  const failure = errorOf(error);
  if (failure.code !== Code.Aborted) return undefined;
  return failure.findDetails(EditConflictSchema)[0];
}
