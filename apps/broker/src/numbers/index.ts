// Proxy numbers: the pool's entity and its repository (reads of the pool and its usage).
export { ProxyNumber } from './proxy-number.entity';
export { ProxyNumberRepository, type PoolUsageRows } from './proxy-number.repository';
