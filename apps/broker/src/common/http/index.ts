export { clientAddress } from './client-address';
export { READS_BODY_AFTER_AUTHENTICATION, RequestBodyGuard, RequestBodyReader, UNAUTHENTICATED_BODY_LIMIT_BYTES } from './request-body';
export { StreamSlots } from './stream-slots';
