import type { ChangedBy } from "@testrun/gen/testrun/common/v1/actor_pb";

/**
 * Who stored a version (catalog.proto, TestCase.updated_by; an EditConflict's changed_by), as the
 * catalog's conflict messages and the console's pages name them: "Ana (ana@example.com)",
 * "operator alice", "an operator"; "" when nobody was recorded (each says that its own way).
 */
export function changedByName(changedBy: ChangedBy | undefined): string {
  switch (changedBy?.kind.case) {
    case "member": {
      const { displayName, email } = changedBy.kind.value;
      return email ? `${displayName} (${email})` : displayName;
    }
    case "operator":
      return changedBy.kind.value.name ? `operator ${changedBy.kind.value.name}` : "an operator";
    default:
      return "";
  }
}
