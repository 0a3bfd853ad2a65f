export { InterceptModule } from './intercept.module';
export {
  INTERCEPT_EVENT_TYPE,
  InterceptClient,
  type InterceptDecision,
  type InterceptDialect,
  type InterceptRequest,
  type InterceptOutcome,
  type InterceptQuestion,
} from './intercept-client';
