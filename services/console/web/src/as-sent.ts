// A refused save's error at a field is about the value that was sent: a form shows it while the
// field still holds that value, drops it as soon as the person changes the field, and shows it
// again if they change it back. One rule for every form (api.ts formErrors, the test case editor).

/** Whether a field holds what was sent. Plain values only (texts, booleans, lists, rows). */
export const stillAsSent = (sent: unknown, current: unknown): boolean =>
  JSON.stringify(sent) === JSON.stringify(current);
