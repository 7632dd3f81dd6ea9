// Organizations and their members (CatalogService).

import { timestampDate } from "@bufbuild/protobuf/wkt";
import type {
  CreateOrganizationResponse,
  Member,
  Organization,
  Role,
} from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { CliContext } from "../context.js";
import { UsageError } from "../errors.js";

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
