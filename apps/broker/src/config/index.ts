export { BROKER_CONFIG, type BrokerConfig, type BreakerSettings, type ProviderConfig } from './broker-config';
export { ConfigModule } from './config.module';
export { ConfigError, loadConfig, loadConfigFromEnvironment, parseProviders } from './load-config';
