// Organizations and their members (CatalogService).

import { timestampDate } from "@bufbuild/protobuf/wkt";
import type {
  CreateOrganizationResponse,
  Member,
  Organization,
  Role,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type Command, Option } from "commander";
import { parseId, parseRole, parseText } from "../arguments.js";
import { type CommandKit, parser } from "../command-kit.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";
import { jsonText } from "../output.js";
import { memberView, organizationView } from "../views.js";

/** Follows next_page_token until the last page; lists are small enough to hold whole. */
export async function allPages<T>(
  fetch: (pageToken: string) => Promise<{ items: T[]; nextPageToken: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let pageToken = "";
  do {
    const page = await fetch(pageToken);
    items.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return items;
}

export interface CreateOrganizationInput {
  name: string;
  /** Email of a first member, made OWNER in the same call. */
  ownerEmail?: string;
  /** Display name of that member; required with ownerEmail. */
  ownerName?: string;
}

export async function createOrganization(
  ctx: CliContext,
  input: CreateOrganizationInput,
): Promise<CreateOrganizationResponse> {
  if ((input.ownerEmail === undefined) !== (input.ownerName === undefined)) {
    throw new UsageError("--owner-email and --owner-name go together");
  }
  return ctx.catalog.createOrganization({
    actor: ctx.actor,
    name: input.name,
    ownerEmail: input.ownerEmail,
    ownerDisplayName: input.ownerName ?? "",
  });
}

export function listOrganizations(ctx: CliContext): Promise<Organization[]> {
  return allPages(async (pageToken) => {
    const page = await ctx.catalog.listOrganizations({ actor: ctx.actor, pageSize: 1000, pageToken });
    return { items: page.organizations, nextPageToken: page.nextPageToken };
  });
}

export interface AddMemberInput {
  organizationId: string;
  email: string;
  displayName: string;
  role: Role;
}

export async function addMember(ctx: CliContext, input: AddMemberInput): Promise<Member> {
  const { member } = await ctx.catalog.addMember({ actor: ctx.actor, ...input });
  return required(member, "member");
}

export function listMembers(
  ctx: CliContext,
  input: { organizationId: string; includeRemoved?: boolean },
): Promise<Member[]> {
  return allPages(async (pageToken) => {
    const page = await ctx.catalog.listMembers({
      actor: ctx.actor,
      organizationId: input.organizationId,
      includeRemoved: input.includeRemoved ?? false,
      pageSize: 1000,
      pageToken,
    });
    return { items: page.members, nextPageToken: page.nextPageToken };
  });
}

export async function changeMemberRole(
  ctx: CliContext,
  input: { memberId: string; role: Role },
): Promise<Member> {
  const { member } = await ctx.catalog.changeMemberRole({ actor: ctx.actor, ...input });
  return required(member, "member");
}

export async function removeMember(ctx: CliContext, input: { memberId: string }): Promise<Member> {
  const { member } = await ctx.catalog.removeMember({ actor: ctx.actor, ...input });
  return required(member, "member");
}

/** A response field the contract says is always set; its absence is a service bug, said plainly. */
export function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`the service answered without ${field}`);
  return value;
}

/** A one-time sign-in link to the web console for a member (valid 15 minutes, usable once). */
export async function createSignInLink(
  ctx: CliContext,
  input: { memberId: string },
): Promise<{ url: string; email: string; expiresAt: Date | undefined }> {
  const link = await ctx.console.createSignInLink(input);
  return { url: link.url, email: link.email, expiresAt: link.expiresAt && timestampDate(link.expiresAt) };
}

/** testrunctl's `org and member` commands. */
export function registerOrganizationCommands(
  program: Command,
  { io, ctx, leaf, print, printOne, orgOption }: CommandKit,
): void {
  // --- organizations -------------------------------------------------------------------------
  const org = program.command("org").description("organizations");
  leaf(org, "create <name>", "create an organization, optionally with its first owner")
    .option("--owner-email <email>", "email of the first member, made owner")
    .option("--owner-name <name>", "display name of that member (required with --owner-email)")
    .action(async (name: string, options: { json?: boolean; ownerEmail?: string; ownerName?: string }) => {
      const response = await createOrganization(ctx(), {
        name: parseText(name, "the name"),
        ownerEmail: options.ownerEmail,
        ownerName: options.ownerName,
      });
      const organization = response.organization;
      if (options.json) return io.stdout(jsonText(organizationView.responseJson(response)));
      if (organization) io.stdout(organizationView.table([organization]));
      if (response.owner) io.stdout(`\nowner:\n${memberView.table([response.owner])}`);
    });
  leaf(org, "list", "list every organization, oldest first").action(async (options: { json?: boolean }) => {
    const organizations = await listOrganizations(ctx());
    print(options, organizationView, organizations, organizationView.listJson(organizations));
  });

  // --- members -------------------------------------------------------------------------------
  const member = program.command("member").description("members of an organization and their roles");
  leaf(member, "add", "add a member (re-adding a removed member's email reactivates it)")
    .addOption(orgOption().makeOptionMandatory())
    .requiredOption("--email <email>", "the member's email address")
    .requiredOption("--name <name>", "the name shown in the console")
    .addOption(
      new Option("--role <role>", "owner, admin, editor or viewer")
        .argParser(parser(parseRole))
        .makeOptionMandatory(),
    )
    .action(async (options: { json?: boolean; org: string; email: string; name: string; role: number }) => {
      const added = await addMember(ctx(), {
        organizationId: options.org,
        email: options.email,
        displayName: options.name,
        role: options.role,
      });
      printOne(options, memberView, added, "member");
    });
  leaf(member, "list", "list an organization's members, oldest first")
    .addOption(orgOption().makeOptionMandatory())
    .option("--include-removed", "also list removed members")
    .action(async (options: { json?: boolean; org: string; includeRemoved?: boolean }) => {
      const members = await listMembers(ctx(), {
        organizationId: options.org,
        includeRemoved: options.includeRemoved ?? false,
      });
      print(options, memberView, members, memberView.listJson(members));
    });
  leaf(
    member,
    "set-role <member-id> <role>",
    "change a member's role (owner, admin, editor, viewer); a change to viewer kills the member's API keys for good",
  ).action(async (memberId: string, role: string, options: { json?: boolean }) => {
    const changed = await changeMemberRole(ctx(), {
      memberId: parseId(memberId, "mem", "the member"),
      role: parseRole(role),
    });
    printOne(options, memberView, changed, "member");
  });
  leaf(member, "remove <member-id>", "remove a member; the member's API keys stop working for good").action(
    async (memberId: string, options: { json?: boolean }) => {
      const removed = await removeMember(ctx(), { memberId: parseId(memberId, "mem", "the member") });
      if (!options.json && removed.state === MemberState.REMOVED) io.stderr(`removed ${removed.email}\n`);
      printOne(options, memberView, removed, "member");
    },
  );

  leaf(
    member,
    "sign-in-link <member-id>",
    "print a one-time link that signs the member in to the web console (valid 15 minutes, usable once)",
  ).action(async (memberId: string, options: { json?: boolean }) => {
    const link = await createSignInLink(ctx(), { memberId: parseId(memberId, "mem", "the member") });
    if (options.json)
      return io.stdout(
        jsonText({ url: link.url, email: link.email, expiresAt: link.expiresAt?.toISOString() }),
      );
    // The link alone on stdout, so `$(testrunctl member sign-in-link …)` is the link.
    io.stdout(`${link.url}\n`);
    io.stderr(`signs in ${link.email}; usable once, until ${link.expiresAt?.toISOString()}\n`);
  });
}
