import { LocalPostgres } from '../../database/src';
export default async function () {
  console.log('global setup', typeof LocalPostgres);
}
