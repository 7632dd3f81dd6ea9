// Whether plans and tags run a test case (catalog.proto, TestCase.enabled).
import { Badge } from "../../components/Status";

export const EnabledBadge = ({ enabled }: { enabled: boolean }) =>
  enabled ? <Badge tone="good">Enabled</Badge> : <Badge tone="neutral">Disabled</Badge>;
