// CodeView loaded when a page first shows source: CodeMirror is most of a megabyte, which every
// other page of the console would otherwise download before it shows anything.
import { type ComponentProps, lazy, Suspense } from "react";
import { Loading } from "./States";

const CodeViewModule = lazy(() => import("./CodeView").then((module) => ({ default: module.CodeView })));

export function CodeView(props: ComponentProps<typeof CodeViewModule>) {
  return (
    <Suspense fallback={<Loading what="the editor" />}>
      <CodeViewModule {...props} />
    </Suspense>
  );
}
