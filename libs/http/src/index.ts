export { PrototypedExpressAdapter, withPrototype } from './express-adapter';
