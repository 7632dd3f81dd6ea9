// The bounds of a step (proto/testrun/catalog/v1/step.proto), in one place: the catalog checks a
// step against them on write (catalog steps.ts, browser-steps.ts) and the console's editor shows
// them where a person reaches them, so the form and the server cannot disagree on a number.

/** The longest a step may take, or wait, in milliseconds (each `timeout_ms`, `max_duration_ms`). */
export const stepMaxMs = 120_000;

/** The methods an HTTP step may send (HttpRequest.method). */
export const httpMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export const httpStepBounds = {
  /** Headers, query parameters, saved values, header checks, body texts, JSON checks: each. */
  entries: 50,
  statuses: 20,
  /** A request body's bytes: the raw text, or the JSON as sent (1 MiB). */
  bodyBytes: 1024 * 1024,
  ms: stepMaxMs,
  pathCharacters: 2048,
} as const;

export const browserStepBounds = {
  /** A locator's text (its role, label, text, placeholder, test id or CSS) and its accessible name. */
  locatorCharacters: 2000,
  /** Locator.nth: 0 (exactly one match) or 1 to this. */
  nth: 1000,
  /** A goto URL and the URL patterns of wait_for and expect. */
  urlCharacters: 2048,
  keyCharacters: 100,
  /** The options one select chooses. */
  options: 100,
  fillCharacters: 100_000,
  /** The text or value an expect compares with. */
  expectedCharacters: 10_000,
  titleCharacters: 1000,
  /** The most elements an expect's count may ask for. */
  count: 10_000,
  screenshotNameCharacters: 100,
  ms: stepMaxMs,
} as const;
