import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { checkPlaywright } from "@testrun/content-file";
import { type PlaywrightSpec, PlaywrightSpecSchema } from "@testrun/gen/testrun/catalog/v1/playwright_pb";
import type { Violations } from "./errors.js";

// Playwright spec cases on write (proto/testrun/catalog/v1/playwright.proto): the rules and bounds
// are @testrun/content-file's (shared with the CLI and the console), and the storage form is the
// spec's canonical proto JSON, as steps are stored, so what an executor receives is exactly what
// was checked.

/**
 * Checks a spec case's files, adding every violation under `field` (`playwright`,
 * `test_cases[2].playwright`), and returns its storage form.
 */
export function checkSpec(spec: PlaywrightSpec, field: string, violations: Violations): JsonValue {
  checkPlaywright(spec, field, (at, problem) => violations.add(at, problem));
  return toJson(PlaywrightSpecSchema, spec);
}

/** A stored spec as a message (tolerating fields a later version of playwright.proto dropped). */
export const playwrightFromStorage = (stored: JsonValue): PlaywrightSpec =>
  fromJson(PlaywrightSpecSchema, stored, { ignoreUnknownFields: true });
