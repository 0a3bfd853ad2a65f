export { CLOCK, ClockModule } from './clock.module';
