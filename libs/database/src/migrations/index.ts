/** Every migration, oldest first. `npm run migration:generate -- <Name>` adds to this list. */
import { InitialSchema1796021822493 } from './1796021822493-InitialSchema';
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export const MIGRATIONS: Function[] = [InitialSchema1796021822493];
