// Project API keys and content tokens (KeysService).

import {
  type ApiKey,
  type CreateKeyResponse,
  type KeyExpiry,
  KeyKind,
} from "@testrun/gen/testrun/keys/v1/keys_pb";
import { type Command, Option } from "commander";
import { parseExpiry, parseId, parseText } from "../arguments.js";
import { type CommandKit, parser } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { jsonText } from "../output.js";
import { keyView } from "../views.js";
import { required } from "./organizations.js";

export interface CreateKeyInput {
  projectId: string;
  /** Where the key is used, e.g. "github actions: deploy". */
  name: string;
  /** The member the key acts for: an active EDITOR or above (operators must name one). */
  creatorMemberId: string;
  /** UNSPECIFIED means 90 days. */
  expiry?: KeyExpiry;
  /** An API key (default) or a content token (import only, docs/keys.md "Content tokens"). */
  kind?: KeyKind;
}

/** `--kind`: what a key is for. */
const kinds = { api: KeyKind.API_KEY, content: KeyKind.CONTENT_TOKEN } as const;
const kindOption = (what: string) =>
  new Option("--kind <kind>", `${what}: api (an API key) or content (a content token, trc_…, import only)`)
    .choices(Object.keys(kinds))
    .default("api");

/** Creates a key. The response carries the secret: this is the only time it exists outside the caller. */
export async function createKey(ctx: CliContext, input: CreateKeyInput): Promise<CreateKeyResponse> {
  const response = await ctx.keys.createKey({
    actor: ctx.actor,
    projectId: input.projectId,
    name: input.name,
    expiry: input.expiry,
    creatorMemberId: input.creatorMemberId,
    kind: input.kind ?? KeyKind.API_KEY,
  });
  required(response.key, "key");
  return response;
}

export async function listKeys(
  ctx: CliContext,
  input: { projectId: string; includeRevoked?: boolean; kind?: KeyKind },
): Promise<ApiKey[]> {
  const { keys } = await ctx.keys.listKeys({
    actor: ctx.actor,
    projectId: input.projectId,
    includeRevoked: input.includeRevoked ?? false,
    kind: input.kind ?? KeyKind.API_KEY,
  });
  return keys;
}

export async function revokeKey(
  ctx: CliContext,
  input: { projectId: string; keyId: string },
): Promise<ApiKey> {
  const { key } = await ctx.keys.revokeKey({ actor: ctx.actor, ...input });
  return required(key, "key");
}

/** testrunctl's `key` commands. */
export function registerKeyCommands(
  program: Command,
  { io, ctx, secrets, leaf, print, printOne, projectOption }: CommandKit,
): void {
  // --- API keys ------------------------------------------------------------------------------
  const key = program.command("key").description("project API keys (what pipelines and agents use with /v1)");
  leaf(key, "create <name>", "create a key; its secret is printed this once and can never be shown again")
    .addOption(projectOption().makeOptionMandatory())
    .addOption(
      new Option("--creator <member-id>", "the member the key acts for: an active editor or above (mem_…)")
        .argParser(parser((v) => parseId(v, "mem", "the creator")))
        .makeOptionMandatory(),
    )
    .addOption(
      new Option("--expiry <expiry>", "lifetime").choices(["30d", "90d", "1y", "never"]).default("90d"),
    )
    .addOption(kindOption("what to create"))
    .action(
      async (
        name: string,
        options: {
          json?: boolean;
          project: string;
          creator: string;
          expiry: string;
          kind: keyof typeof kinds;
        },
      ) => {
        const response = await createKey(ctx(), {
          projectId: options.project,
          name: parseText(name, "the name"),
          creatorMemberId: options.creator,
          expiry: parseExpiry(options.expiry),
          kind: kinds[options.kind],
        });
        secrets.add(response.secret);
        io.stderr(
          "The secret below is shown this once and cannot be retrieved again: store it in a secret store now " +
            "(e.g. your CI's secrets), never in a repository.\n",
        );
        if (options.json) return io.stdout(jsonText(keyView.createdJson(response)));
        io.stdout(keyView.table(response.key ? [response.key] : []));
        io.stdout(`\nsecret: ${response.secret}\n`);
      },
    );
  leaf(key, "list", "list a project's keys, oldest first (never their secrets)")
    .addOption(projectOption().makeOptionMandatory())
    .option("--include-revoked", "also list revoked keys")
    .addOption(kindOption("what to list"))
    .action(
      async (options: {
        json?: boolean;
        project: string;
        includeRevoked?: boolean;
        kind: keyof typeof kinds;
      }) => {
        const keys = await listKeys(ctx(), {
          projectId: options.project,
          includeRevoked: options.includeRevoked,
          kind: kinds[options.kind],
        });
        print(options, keyView, keys, keyView.listJson(keys));
      },
    );
  leaf(key, "revoke <key-id>", "revoke a key at once and for good")
    .addOption(projectOption().makeOptionMandatory())
    .action(async (keyId: string, options: { json?: boolean; project: string }) => {
      const revoked = await revokeKey(ctx(), {
        projectId: options.project,
        keyId: parseId(keyId, "key", "the key"),
      });
      if (!options.json) io.stderr(`revoked key ${revoked.id}\n`);
      printOne(options, keyView, revoked, "key");
    });
}
