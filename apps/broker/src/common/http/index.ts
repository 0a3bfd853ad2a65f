export { RequestBodyInterceptor, UNAUTHENTICATED_BODY_LIMIT_BYTES, markAuthenticated } from './request-body.interceptor';
export { StreamSlots } from './stream-slots';
