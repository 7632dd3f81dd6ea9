// The test cases a plan editor has chosen, in run order: moved, removed, ticked in the picker or
// added all at once, each change said to screen readers, focus kept where the person was.
import type { TestCase } from "@testrun/gen/testrun/catalog/v1/catalog_pb";
import { type KeyboardEvent, useEffect, useRef, useState } from "react";
import { plural } from "../../format";
import { planBound } from "./plan-draft";

/** Where focus goes once the list has changed: an element to put it back on, or a row. */
type FocusAfter = { element: HTMLElement; id: string } | { row: string } | { search: true };

export function usePlanCases(cases: TestCase[]) {
  const [chosen, setChosen] = useState<TestCase[]>(cases);
  const [announcement, setAnnouncement] = useState("");
  const list = useRef<HTMLOListElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const focusAfter = useRef<FocusAfter | null>(null);
  const full = chosen.length >= planBound;

  useEffect(() => {
    const target = focusAfter.current;
    focusAfter.current = null;
    if (!target) return;
    const rowOf = (id: string) => list.current?.querySelector<HTMLElement>(`[data-case="${CSS.escape(id)}"]`);
    if ("search" in target) search.current?.focus();
    else if ("row" in target) rowOf(target.row)?.focus();
    // The same button or row again, unless the move disabled that button (first or last now).
    else if (target.element.isConnected && !target.element.matches(":disabled")) target.element.focus();
    else rowOf(target.id)?.focus();
  });

  const move = (index: number, by: -1 | 1) => {
    const testCase = chosen[index];
    const to = index + by;
    if (!testCase) return;
    if (to < 0 || to >= chosen.length) {
      setAnnouncement(`${testCase.name} is already ${to < 0 ? "first" : "last"}.`);
      return;
    }
    const next = [...chosen];
    next.splice(index, 1);
    next.splice(to, 0, testCase);
    const active = document.activeElement;
    focusAfter.current =
      active instanceof HTMLElement ? { element: active, id: testCase.id } : { row: testCase.id };
    setChosen(next);
    setAnnouncement(`${testCase.name} moved to position ${to + 1} of ${next.length}.`);
  };
  const remove = (index: number) => {
    const testCase = chosen[index];
    if (!testCase) return;
    const next = chosen.filter((_, i) => i !== index);
    const neighbour = next[index] ?? next[index - 1];
    focusAfter.current = neighbour ? { row: neighbour.id } : { search: true };
    setChosen(next);
    setAnnouncement(`${testCase.name} removed from the plan. ${plural(next.length, "test case")} left.`);
  };
  /** From the picker: ticking adds at the end (while there is room), unticking removes. */
  const toggle = (testCase: TestCase) => {
    const index = chosen.findIndex((c) => c.id === testCase.id);
    if (index >= 0) {
      setChosen(chosen.filter((c) => c.id !== testCase.id));
      setAnnouncement(`${testCase.name} removed from the plan.`);
    } else if (!full) {
      setChosen([...chosen, testCase]);
      setAnnouncement(`${testCase.name} added as test case ${chosen.length + 1}.`);
    }
  };
  const addAll = (listed: TestCase[]) => {
    const known = new Set(chosen.map((c) => c.id));
    const added = listed.filter((c) => !known.has(c.id)).slice(0, planBound - chosen.length);
    setChosen([...chosen, ...added]);
    setAnnouncement(
      `${plural(added.length, "test case")} added; the plan holds ${plural(chosen.length + added.length, "test case")}.`,
    );
  };
  const onRowKey = (event: KeyboardEvent<HTMLLIElement>, index: number) => {
    const onRow = event.target === event.currentTarget;
    if (event.key !== "ArrowUp" && event.key !== "ArrowDown") return;
    if (event.altKey) {
      event.preventDefault();
      move(index, event.key === "ArrowUp" ? -1 : 1);
    } else if (onRow) {
      // Plain arrows go from row to row.
      event.preventDefault();
      const sibling =
        event.key === "ArrowUp"
          ? event.currentTarget.previousElementSibling
          : event.currentTarget.nextElementSibling;
      if (sibling instanceof HTMLElement) sibling.focus();
    }
  };
  return { chosen, full, announcement, list, search, move, remove, toggle, addAll, onRowKey };
}
