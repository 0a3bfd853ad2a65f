/** Every entity of the broker; the data source and the migration drift check read this list. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const ENTITIES: Function[] = [];
