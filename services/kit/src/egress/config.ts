import { z } from "zod";
import { type Cidr, parseAllowList, parseCidrList } from "./policy.js";

/** A comma-separated list of address ranges (EGRESS_ALLOW_CIDRS, EGRESS_DENY_CIDRS); empty: none. */
export const cidrList = (parse: (text: string) => Cidr[]) =>
  z
    .string()
    .default("")
    .transform((text, ctx) => {
      try {
        return parse(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    });

/** EGRESS_ALLOW_CIDRS: exceptions to the built-in blocks (parseAllowList's rules). */
export const egressAllowCidrs = cidrList(parseAllowList);
/** EGRESS_DENY_CIDRS: ranges refused on top of the built-in blocks. */
export const egressDenyCidrs = cidrList(parseCidrList);
/** EGRESS_CLUSTER_DOMAIN: host names under it (and `.svc`, single labels) are refused. */
export const egressClusterDomain = z
  .string()
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i,
    "must be a DNS domain like cluster.local",
  )
  .default("cluster.local");
