import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { MemberState } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import type { ConsoleAdminService } from "@testrun/gen/testrun/console/v1/console_pb";
import type { SignInLinks } from "../auth/sign-in-links.js";
import type { Directory } from "../directory.js";
import { relay } from "./relay.js";

/** The path a sign-in link opens; its token follows in the fragment, which browsers never send. */
export const signInLinkPath = "/sign-in/link";

/** ConsoleAdminService, on the internal gRPC port: what testrunctl calls with the service token. */
export function adminService(deps: {
  links: SignInLinks;
  directory: Directory;
  appUrl: string;
}): Partial<ServiceImpl<typeof ConsoleAdminService>> {
  return {
    async createSignInLink(req) {
      if (!req.memberId) throw new ConnectError("member_id is required", Code.InvalidArgument);
      const member = await relay(deps.directory.member(req.memberId));
      if (!member) throw new ConnectError("member not found", Code.NotFound);
      if (member.state !== MemberState.ACTIVE)
        throw new ConnectError("the member was removed: add them again first", Code.FailedPrecondition);
      const { token, expiresAt } = await deps.links.issue(member.id);
      return {
        url: `${deps.appUrl}${signInLinkPath}#${token}`,
        expiresAt: timestampFromDate(expiresAt),
        email: member.email,
      };
    },
  };
}
