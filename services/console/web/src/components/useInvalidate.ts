// Refreshes only the queries a change affects, by the methods that read them. How to use:
//
//   const invalidate = useInvalidate();
//   save.mutate(request, {
//     onSuccess: async () => {
//       await invalidate(ConsoleService.method.listWebhooks);           // every listWebhooks query, any input
//       …
//     },
//   });
//
// Name each query the page (and the dialogs on it) shows whose answer the change alters: the list it
// changed, the one-item read (getTestPlan) when that is on screen, and reads that show a count or a
// name from it. Queries of other pages need nothing: they are stale at once (staleTime 0) and refetch
// when their page mounts. `invalidate()` with no method refreshes every query (a change that may touch
// anything, such as an import of a whole project's content).
import type { DescMethod } from "@bufbuild/protobuf";
import { createConnectQueryKey } from "@connectrpc/connect-query";
import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";

export type Invalidate = (...methods: DescMethod[]) => Promise<void>;

export function useInvalidate(): Invalidate {
  const queryClient = useQueryClient();
  return useCallback(
    async (...methods: DescMethod[]) => {
      if (methods.length === 0) return queryClient.invalidateQueries();
      await Promise.all(
        methods.map((method) =>
          queryClient.invalidateQueries({
            // Without input or cardinality the key matches the method's queries whatever they asked.
            queryKey: createConnectQueryKey({ schema: method as never, cardinality: undefined }),
          }),
        ),
      );
    },
    [queryClient],
  );
}
