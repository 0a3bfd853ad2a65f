export { freePort } from './free-port';
export { createTestDatabase, type TestDatabase } from './test-database';
export { testAdminUrl } from './test-env';
