// Where the catalog's messages about an HTTP step belong in the form: its field paths
// (`steps[i].http.request.headers["Accept"]`) as the form's fields and rows, and what each field
// holds, so a refusal stays at a field only while it still holds what was refused.
import type { HttpDraft } from "./http-draft.js";
import { parseStatuses } from "./http-text.js";
import { type Pair, rowField } from "./model.js";

/** Fields of the catalog's paths (proto names) -> the form's, and the rows each map's entries are. */
const requestFields: Record<string, string> = {
  method: "request.method",
  path: "request.path",
  json: "request.json",
  raw: "request.raw",
  timeout_ms: "request.timeoutMs",
};
const expectFields: Record<string, string> = {
  status: "expect.status",
  body_contains: "expect.bodyContains",
  body_not_contains: "expect.bodyNotContains",
  max_duration_ms: "expect.maxDurationMs",
};
const mapFields: Record<string, (draft: HttpDraft) => Pair[]> = {
  "request.headers": (draft) => draft.headers,
  "request.query": (draft) => draft.query,
  "expect.headers": (draft) => draft.expect.headers,
  "expect.json": (draft) => draft.expect.json,
  save: (draft) => draft.save,
};

/** `.request.headers["X-Id"]` -> the field `request.headers`, the key `X-Id`; `[2]` -> the index. */
function splitPath(rest: string): { field: string; key?: string; index?: number } | undefined {
  const match = /^\.(request|expect|save)(?:\.([a-z_]+))?(?:\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\])?$/.exec(rest);
  if (!match) return undefined;
  const [, part, name, index, key] = match;
  const field = part === "save" ? "save" : `${part}.${name ?? ""}`;
  if (part === "save" && name !== undefined) return undefined;
  return {
    field,
    ...(index !== undefined && { index: Number(index) }),
    ...(key !== undefined && { key: JSON.parse(key) as string }),
  };
}

export function fieldOf(rest: string, draft: HttpDraft): { field: string; prefix?: string } | undefined {
  // The step has no request at all: only a JSON view could do that, and the method comes first.
  if (rest === "" || rest === ".request") return { field: "request.method" };
  const path = splitPath(rest);
  if (!path) return undefined;
  const rows = mapFields[path.field];
  if (rows) {
    if (path.key === undefined) return { field: path.field };
    const index = rows(draft).findIndex((row) => row.name === path.key);
    return index < 0
      ? { field: path.field, prefix: `“${path.key}”: ` }
      : { field: rowField(path.field, index) };
  }
  const [part, name = ""] = path.field.split(".");
  const field = (part === "request" ? requestFields : expectFields)[name];
  if (!field) return undefined;
  if (field === "expect.status" && path.index !== undefined) {
    const code = parseStatuses(draft.expect.status).codes[path.index];
    return { field, ...(code !== undefined && { prefix: `“${code}”: ` }) };
  }
  return { field };
}

/** `request.path` -> draft.path, `expect.status` -> draft.expect.status, `save#2` -> draft.save[2]. */
export function valueAt(field: string, draft: HttpDraft): unknown {
  const [place = "", row] = field.split("#");
  const [part, name = ""] = place.split(".");
  const whole =
    part === "save"
      ? draft.save
      : part === "request" && name in draft
        ? draft[name as keyof HttpDraft]
        : part === "expect" && name in draft.expect
          ? draft.expect[name as keyof HttpDraft["expect"]]
          : undefined;
  return row === undefined ? whole : Array.isArray(whole) ? whole[Number(row)] : undefined;
}
