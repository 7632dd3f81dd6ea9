import "zod-openapi";
import { z } from "zod";

/**
 * The schemas of POST /v1/content/import (routes/content-import.ts): the document it takes is
 * the content-file format (docs/pipelines.md, @testrun/content-file), read and checked field by field by
 * @testrun/content-file, so the document describes it as an object and points there rather
 * than repeating a second copy that could drift from the parser.
 */

export const dryRunParam = z.enum(["true", "false"]).optional().meta({
  description:
    "true: check the document and answer what it would change, changing nothing (applied is false).",
});

export const contentDocumentSchema = z.looseObject({}).meta({
  id: "ContentDocument",
  description:
    "The project's content in the content-file format (docs/pipelines.md, @testrun/content-file): its test cases, test plans, environments and variables. At most 8 MiB.",
});

const outcome = z.enum(["created", "changed", "unchanged"]).meta({
  description: "What the import did (or would do) to the item.",
});

const importedItemSchema = z
  .object({
    path: z.string().meta({ description: "Where the item is in the document, e.g. testCases[1]." }),
    name: z.string().meta({ description: "The item's name." }),
    id: z.string().optional().meta({ description: "The item's id; absent for one a dry run would create." }),
    outcome,
    changedFields: z
      .array(z.string())
      .optional()
      .meta({ description: "The fields that changed, when outcome is changed." }),
  })
  .meta({ id: "ImportedItem", description: "One item of the document and what became of it." });

const names = (description: string) => z.array(z.string()).meta({ description });

export const importAnswerSchema = z
  .object({
    applied: z.boolean().meta({ description: "false for a dry run: nothing was changed." }),
    testCases: z.array(importedItemSchema),
    testPlans: z.array(importedItemSchema),
    environments: z.array(importedItemSchema),
    variables: z.array(importedItemSchema),
    variablesWithoutValue: names(
      "The project's variables that have no value after the import, oldest first: to set before tests naming them can pass.",
    ),
    otherTestCases: z.int().min(0).meta({
      description: "How many of the project's test cases the document does not hold (left as they are).",
    }),
    otherTestPlans: z.int().min(0).meta({
      description: "How many of the project's test plans the document does not hold (left as they are).",
    }),
  })
  .meta({
    id: "ContentImport",
    description: "What the import did, or for a dry run would do, item by item.",
  });

export const violationsSchema = z
  .array(
    z.object({
      field: z.string().meta({ description: "The field, as the document names it (testCases[1].name)." }),
      problem: z.string().meta({ description: "What is wrong with it." }),
    }),
  )
  .meta({ description: "The fields that are wrong; empty when the message alone says it." });
