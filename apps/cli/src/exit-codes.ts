export const EXIT = {
  ok: 0,
  /** The broker answered with an error (problem+json). */
  apiError: 1,
  /** The command line is wrong. */
  usage: 2,
  /** No answer from the broker: refused, unreachable, timed out. */
  unreachable: 3,
} as const;
