// Whether a save fits what the console reads of CreateTestCase and UpdateTestCase: measured before
// sending, so a case too large is said in the page rather than refused after it was uploaded.
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { binaryBytes, catalogMessageBytes } from "../../catalog-bound.js";

const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;

/** Why `request` is too large to save (a sentence for the page), or undefined if it fits. */
export function saveSizeProblem<Desc extends DescMessage>(
  schema: Desc,
  request: MessageShape<Desc>,
): string | undefined {
  const bytes = binaryBytes(schema, request);
  if (bytes <= catalogMessageBytes) return undefined;
  return `This test case is ${mib(bytes)} as sent; a test case is saved in one message of at most ${catalogMessageBytes / (1024 * 1024)} MiB. Make its bodies smaller, or split its steps into several test cases.`;
}
