export { BROKER_CONFIG, type BrokerConfig, type BreakerSettings, type ProviderConfig } from './broker-config';
export { ConfigModule } from './config.module';
export { ConfigError, configVariables, loadConfig, loadConfigFromEnvironment, parseProviders } from './load-config';
