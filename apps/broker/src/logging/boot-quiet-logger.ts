import type { LoggerService } from '@nestjs/common';

/** Nest's own start-up chatter (one line per module and per route): debug, so the listeners and keys lead the log. */
const BOOT_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Passes everything to `logger`, with Nest's bootstrap lines moved from `log` to `debug`. */
export class BootQuietLogger implements LoggerService {
  constructor(private readonly logger: LoggerService) {}

  log(message: unknown, ...params: unknown[]): void {
    if (BOOT_CONTEXTS.has(String(params[params.length - 1])) && this.logger.debug) this.logger.debug(message, ...params);
    else this.logger.log(message, ...params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.logger.error(message, ...params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.logger.warn(message, ...params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.logger.debug?.(message, ...params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.logger.verbose?.(message, ...params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.logger.fatal?.(message, ...params);
  }
}
