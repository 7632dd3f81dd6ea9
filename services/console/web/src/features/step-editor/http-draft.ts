// The draft of an HTTP step (http-step.ts): its shape alone, which http-step.ts (reading and
// writing it) and http-paths.ts (where the catalog's messages belong in it) both use.
import type { Pair } from "./model.js";

/** What the form holds of an HTTP step: texts as typed. */
export interface HttpDraft {
  method: string;
  path: string;
  query: Pair[];
  headers: Pair[];
  /** Which body is sent; the texts of the others are kept while editing, not sent. */
  body: "none" | "json" | "raw";
  /** The JSON body as text. */
  json: string;
  raw: string;
  /** Milliseconds as typed; empty means the default (10000). */
  timeoutMs: string;
  expect: {
    /**
     * The step carries an expectation even when none of its checks is set (`expect: {}` in the
     * file): kept so that the JSON view gives back what was written.
     */
    given: boolean;
    /** Status codes as typed: "200, 201"; empty means any 2xx. */
    status: string;
    headers: Pair[];
    bodyContains: string[];
    bodyNotContains: string[];
    /** JSON path -> the expected value as JSON text. */
    json: Pair[];
    /** Milliseconds as typed; empty means no limit. */
    maxDurationMs: string;
  };
  /** Name -> JSON path into the response body. */
  save: Pair[];
}
