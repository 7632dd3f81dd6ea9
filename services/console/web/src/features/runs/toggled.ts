/** The list with `item` added, or taken out when it is there (a checkbox list's choice). */
export const toggled = (list: string[], item: string) =>
  list.includes(item) ? list.filter((x) => x !== item) : [...list, item];
