import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';

/** The request's id (`x-request-id`, taken or made by the logging middleware), to name the request in a log line. */
export function requestIdOf(request: IncomingMessage): string | undefined {
  const id = (request as IncomingMessage & { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}

/** A handler parameter: the request's id, for the service lines the request causes (`reqId`). */
export const RequestId = createParamDecorator((_: unknown, context: ExecutionContext) =>
  requestIdOf(context.switchToHttp().getRequest<IncomingMessage>()),
);
