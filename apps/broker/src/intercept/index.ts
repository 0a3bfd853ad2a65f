export { InterceptModule } from './intercept.module';
export {
  INTERCEPT_EVENT_TYPE,
  InterceptClient,
  type InterceptDecision,
  type InterceptOutcome,
  type InterceptQuestion,
} from './intercept-client';
