/** Set by the global setup: a superuser URL on the test server, used to create test databases. */
export const ADMIN_URL_VARIABLE = 'SESSION_BROKER_TEST_ADMIN_URL';

export function testAdminUrl(): string {
  const url = process.env[ADMIN_URL_VARIABLE];
  if (!url) throw new Error(`${ADMIN_URL_VARIABLE} is not set: run the tests through \`npm test\` (Jest's global setup starts PostgreSQL)`);
  return url;
}
