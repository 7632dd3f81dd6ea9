// Facts about one thing (a run, a test, a test case) as a grid of terms and values.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { ReactNode } from "react";
import { Time } from "./Time";

export function Facts({ children }: { children: ReactNode }) {
  return <dl className="facts-grid">{children}</dl>;
}

export function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** When a run or a test started and finished, "not yet" for either that has not happened. */
export function StartedFinished({ at }: { at: { startedAt?: Timestamp; finishedAt?: Timestamp } }) {
  return (
    <>
      <Fact term="Started">
        <Time at={at.startedAt} missing="not yet" />
      </Fact>
      <Fact term="Finished">
        <Time at={at.finishedAt} missing="not yet" />
      </Fact>
    </>
  );
}
