import { ParseUUIDPipe } from '@nestjs/common';
import { ProblemException } from '../common/problem';

/** A session id in a path: any malformed one is a session that is not there, like another account's (404). */
export const sessionIdPipe = new ParseUUIDPipe({
  exceptionFactory: () =>
    new ProblemException({
      status: 404,
      slug: 'session-not-found',
      title: 'Session not found',
      detail: 'No session with this id exists for your account.',
    }),
});
