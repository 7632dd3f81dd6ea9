// Browser steps in the file format of docs/runs.md ("Test cases: the step format") <->
// testrun.catalog.v1.BrowserStep. The file's `browser` object is the message's proto JSON shape
// (camelCase field names), read field by field from the message's descriptor so that every
// mistake names its path (`steps[2].browser.click.locator.role: must be a string, not number`).
// One difference: an ElementState is written by its short name (`state: hidden`); the proto JSON
// name (`ELEMENT_STATE_HIDDEN`) is read too. As for HTTP steps, this checks the shape and the
// catalog the values (locator rules, bounds, ARIA roles).
import {
  type DescEnum,
  type DescField,
  type DescMessage,
  fromJson,
  ScalarType,
  toJson,
} from "@bufbuild/protobuf";
import { type BrowserStep, BrowserStepSchema } from "@testrun/gen/testrun/catalog/v1/step_pb";
import { boolean, child, InputError, int32, type JsonValue, object, string, stringList } from "./input.js";

/**
 * The ARIA roles Playwright's getByRole accepts: the `role` parameter's type in playwright-core's
 * types/types.d.ts (1.65). A Locator's `role` must be one of them (step.proto); a test checks that
 * this list is still the one of the playwright-core the executor drives.
 */
export const ariaRoles = [
  "alert",
  "alertdialog",
  "application",
  "article",
  "banner",
  "blockquote",
  "button",
  "caption",
  "cell",
  "checkbox",
  "code",
  "columnheader",
  "combobox",
  "complementary",
  "contentinfo",
  "definition",
  "deletion",
  "dialog",
  "directory",
  "document",
  "emphasis",
  "feed",
  "figure",
  "form",
  "generic",
  "grid",
  "gridcell",
  "group",
  "heading",
  "img",
  "insertion",
  "link",
  "list",
  "listbox",
  "listitem",
  "log",
  "main",
  "marquee",
  "math",
  "meter",
  "menu",
  "menubar",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "navigation",
  "none",
  "note",
  "option",
  "paragraph",
  "presentation",
  "progressbar",
  "radio",
  "radiogroup",
  "region",
  "row",
  "rowgroup",
  "rowheader",
  "scrollbar",
  "search",
  "searchbox",
  "separator",
  "slider",
  "spinbutton",
  "status",
  "strong",
  "subscript",
  "superscript",
  "switch",
  "tab",
  "table",
  "tablist",
  "tabpanel",
  "term",
  "textbox",
  "time",
  "timer",
  "toolbar",
  "tooltip",
  "tree",
  "treegrid",
  "treeitem",
] as const;

export type AriaRole = (typeof ariaRoles)[number];

type JsonObject = { [key: string]: JsonValue };

const jsonNames = (fields: readonly DescField[]) => fields.map((field) => field.jsonName);

/** BrowserStep's `action` oneof: what a step does. */
const actions = jsonNames(BrowserStepSchema.fields.filter((field) => field.oneof?.name === "action"));

/** A step's `browser` object; `path` is where it sits (`steps[2].browser`). */
export function browserStepFromFile(value: unknown, path: string): BrowserStep {
  const json = messageFromFile(BrowserStepSchema, value, path);
  if (!actions.some((action) => json[action] !== undefined))
    throw new InputError(path, `needs an action: one of ${actions.join(", ")}`);
  return fromJson(BrowserStepSchema, json);
}

/** A browser step's `browser` object, leaving out what holds its default (as proto JSON does). */
export function browserStepToFile(step: BrowserStep): JsonObject {
  return withShortEnumNames(BrowserStepSchema, toJson(BrowserStepSchema, step) as JsonObject);
}

/** Reads a message in its proto JSON shape, every field checked with its path. */
function messageFromFile(desc: DescMessage, value: unknown, path: string): JsonObject {
  const given = object(value, path, jsonNames(desc.fields));
  for (const oneof of desc.oneofs) {
    const [first, second] = oneof.fields.filter((field) => given[field.jsonName] !== undefined);
    if (first && second)
      throw new InputError(
        child(path, second.jsonName),
        `cannot be set together with "${first.jsonName}": only one of ${jsonNames(oneof.fields).join(", ")} is set`,
      );
  }
  const json: JsonObject = {};
  for (const field of desc.fields) {
    const entry = given[field.jsonName];
    if (entry !== undefined) json[field.jsonName] = fieldFromFile(field, entry, child(path, field.jsonName));
  }
  return json;
}

function fieldFromFile(field: DescField, value: unknown, path: string): JsonValue {
  switch (field.fieldKind) {
    case "message":
      return messageFromFile(field.message, value, path);
    case "enum":
      return enumFromFile(field.enum, value, path);
    case "scalar":
      return scalarFromFile(field.scalar, value, path);
    case "list":
      // A single text is taken as a list of one, as elsewhere in the file format.
      if (field.listKind === "scalar" && field.scalar === ScalarType.STRING) return stringList(value, path);
  }
  throw new Error(`${field.parent.typeName}.${field.name} has no file form`);
}

function scalarFromFile(type: ScalarType, value: unknown, path: string): JsonValue {
  switch (type) {
    case ScalarType.STRING:
      return string(value, path);
    case ScalarType.BOOL:
      return boolean(value, path);
    case ScalarType.INT32:
      return int32(value, path);
  }
  throw new Error(`no file form for scalar type ${ScalarType[type]} (${path})`);
}

/** An enum value by its short name (`hidden`) or its proto JSON name (`ELEMENT_STATE_HIDDEN`). */
function enumFromFile(desc: DescEnum, value: unknown, path: string): JsonValue {
  const text = string(value, path);
  const named = desc.values.filter((entry) => entry.number !== 0);
  const found = named.find((entry) => shortName(entry) === text || entry.name === text);
  if (!found) throw new InputError(path, `must be one of ${named.map(shortName).join(", ")}`);
  return found.name;
}

const shortName = (value: { localName: string }) => value.localName.toLowerCase();

function withShortEnumNames(desc: DescMessage, json: JsonObject): JsonObject {
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (field.fieldKind === "enum" && typeof value === "string") {
      const known = field.enum.values.find((entry) => entry.name === value);
      if (known) json[field.jsonName] = shortName(known);
    } else if (
      field.fieldKind === "message" &&
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value)
    )
      withShortEnumNames(field.message, value);
  }
  return json;
}
