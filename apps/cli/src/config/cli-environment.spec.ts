import { readCliEnvironment } from './cli-environment';

describe('readCliEnvironment', () => {
  it('takes BROKER_URL first', () => {
    expect(readCliEnvironment({ BROKER_URL: 'https://broker.example.com', PORT: '3100' }).url).toBe('https://broker.example.com');
  });

  it('finds the broker npm start runs in the same shell: PORT, on loopback unless HOST names one address', () => {
    expect(readCliEnvironment({ PORT: '3100' }).url).toBe('http://127.0.0.1:3100');
    expect(readCliEnvironment({ PORT: '3100', HOST: '0.0.0.0' }).url).toBe('http://127.0.0.1:3100');
    expect(readCliEnvironment({ PORT: '3100', HOST: '::' }).url).toBe('http://127.0.0.1:3100');
    expect(readCliEnvironment({ PORT: '3100', HOST: '10.0.0.5' }).url).toBe('http://10.0.0.5:3100');
    expect(readCliEnvironment({ PORT: '3100', HOST: '::1' }).url).toBe('http://[::1]:3100');
  });

  it('leaves the default to the CLI when neither is set, or PORT is not a port', () => {
    expect(readCliEnvironment({}).url).toBeUndefined();
    expect(readCliEnvironment({ PORT: 'abc' }).url).toBeUndefined();
    expect(readCliEnvironment({ BROKER_URL: '', PORT: '' }).url).toBeUndefined();
  });
});
