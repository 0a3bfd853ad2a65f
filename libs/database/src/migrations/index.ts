/** Every migration, oldest first. `npm run migration:generate -- <Name>` adds to this list. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const MIGRATIONS: Function[] = [];
