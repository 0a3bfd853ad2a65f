export { OpsModule } from './ops.module';
