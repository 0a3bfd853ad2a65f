/** The command line itself is wrong: exit code 2, with a hint to --help. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
