import request from 'supertest';

/** Every series of a broker's /metrics (`name{labels}` → value). */
export async function scrapeMetrics(baseUrl: string): Promise<Map<string, number>> {
  const res = await request(baseUrl).get('/metrics').expect(200);
  const series = new Map<string, number>();
  for (const line of res.text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}
